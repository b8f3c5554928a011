//! What each VO can get of an offer: the free counts its shares' accelerators of the offer's
//! model and virtualization publish (a site computes them as the smaller of the free GPUs and the
//! share's quota headroom), summed over the VO's shares.

use crate::glue::entity::{Class, Entity};

use super::super::{InvalidCount, VoFree};
use super::View;

impl View<'_, '_> {
    /// The VOs of `shares` with the free counts of their `class` accelerators like `gpu`
    /// (`free_name` in slots, `FreePhysicalAccelerators` in physical GPUs). A share that publishes
    /// no such accelerator says nothing of its VOs' headroom, and gives no entry.
    pub(super) fn vo_free(
        &self,
        shares: &[usize],
        class: Class,
        gpu: &Entity,
        free_name: &str,
    ) -> Result<Vec<VoFree>, InvalidCount> {
        let mut out: Vec<VoFree> = Vec::new();
        for &share in shares {
            let (free, free_physical) = self.capacity(
                self.children_of(share, class),
                gpu,
                [free_name, "FreePhysicalAccelerators"],
            )?;
            let Some(free) = free else { continue };
            let mut vos = Vec::new();
            self.share_vos(share, &mut vos);
            for vo in vos {
                match out.iter_mut().find(|have| have.vo == vo) {
                    Some(have) => {
                        have.free = have.free + free;
                        have.free_physical = match (have.free_physical, free_physical) {
                            (Some(a), Some(b)) => Some(a + b),
                            _ => None,
                        };
                    }
                    None => out.push(VoFree {
                        vo,
                        free,
                        free_physical,
                    }),
                }
            }
        }
        Ok(out)
    }
}
