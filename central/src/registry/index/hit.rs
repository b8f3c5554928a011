//! One offer a query selected, as the index hands it to an answer.

use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::Offer;

use super::SiteView;

/// One offer a query selected: where it is, whether it is fresh at the query's time, and for a
/// query for one VO, what that VO can get of it (free slots and physical GPUs) where its shares
/// say.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'i> {
    pub site: &'i SiteView,
    pub position: usize,
    pub fresh: bool,
    pub vo_capacity: Option<(Option<GpuCount>, Option<GpuCount>)>,
}

impl<'i> Hit<'i> {
    pub fn offer(&self) -> &'i Offer {
        &self.site.offers[self.position]
    }

    /// A copy of the offer, marked fresh or stale, with the VO's free counts for a VO's query.
    pub fn to_offer(self) -> Offer {
        let mut offer = Offer {
            fresh: self.fresh,
            ..self.offer().clone()
        };
        if let Some((free, free_physical)) = self.vo_capacity {
            offer.free = free;
            offer.free_physical = free_physical;
        }
        offer
    }
}
