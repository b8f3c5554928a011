//! The entities in tree order, each with its parent, rebuilt from the associations.

use super::*;

/// Puts the entities in tree order, as [`crate::glue::SiteSnapshot::entities`] lists them, and
/// sets each one's parent.
pub(super) fn order(
    read: Vec<Read>,
    by_id: &HashMap<String, usize>,
) -> Result<ParsedDocument, FromJsonError> {
    let domains = read
        .iter()
        .filter(|item| item.entity.class == Class::AdminDomain)
        .count();
    if domains != 1 {
        return Err(FromJsonError::AdminDomains(domains));
    }
    // An entity's parent is the target of its first association; sites and services have none.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); read.len()];
    let mut roots = Vec::new();
    for (position, item) in read.iter().enumerate() {
        let class = item.entity.class;
        if matches!(
            class,
            Class::AdminDomain | Class::ComputingService | Class::CloudComputingService
        ) {
            roots.push(position);
            continue;
        }
        let unplaced = |reason: String| FromJsonError::Unplaced {
            class: class.name(),
            index: item.index,
            id: excerpt(&item.entity.id),
            reason,
        };
        let (target_class, target) = item
            .entity
            .associations
            .first()
            .ok_or_else(|| unplaced("it has no associations".to_owned()))?;
        let parent = by_id.get(target).copied().ok_or_else(|| {
            unplaced(format!(
                "its first association, {} {}, is not in the document",
                target_class.name(),
                excerpt(target)
            ))
        })?;
        children[parent].push(position);
    }
    // Roots: the site, then batch services, then clouds, each in document order.
    roots.sort_by_key(|&position| read[position].entity.class);

    let mut placement: Vec<usize> = Vec::with_capacity(read.len());
    for root in roots {
        place_root(root, &read, &children, &mut placement);
    }
    if placement.len() != read.len() {
        let mut placed = vec![false; read.len()];
        for &position in &placement {
            placed[position] = true;
        }
        if let Some(position) = placed.iter().position(|placed| !placed) {
            let item = &read[position];
            let (parent_class, parent) = &item.entity.associations[0];
            return Err(FromJsonError::Unplaced {
                class: item.entity.class.name(),
                index: item.index,
                id: excerpt(&item.entity.id),
                reason: format!(
                    "a {} cannot hang under {} {}",
                    item.entity.class.name(),
                    parent_class.name(),
                    excerpt(parent)
                ),
            });
        }
    }

    let mut new_position = vec![0; read.len()];
    for (new, &old) in placement.iter().enumerate() {
        new_position[old] = new;
    }
    let mut slots: Vec<Option<Read>> = read.into_iter().map(Some).collect();
    let mut entities = Vec::with_capacity(slots.len());
    let mut stamps = Vec::with_capacity(slots.len());
    for &old in &placement {
        let Some(mut item) = slots[old].take() else {
            continue;
        };
        item.entity.parent = parent_of(&item.entity)
            .and_then(|target| by_id.get(target).map(|&parent| new_position[parent]));
        entities.push(item.entity);
        stamps.push(item.stamp);
    }
    Ok(ParsedDocument { entities, stamps })
}

pub(super) fn parent_of<'e>(entity: &'e Entity) -> Option<&'e str> {
    match entity.class {
        Class::AdminDomain | Class::ComputingService | Class::CloudComputingService => None,
        _ => entity.associations.first().map(|(_, id)| id.as_str()),
    }
}

/// Appends a root and what hangs under it, in the order the builder emits them.
pub(super) fn place_root(
    root: usize,
    read: &[Read],
    children: &[Vec<usize>],
    out: &mut Vec<usize>,
) {
    let of = |parent: usize, classes: &[Class]| -> Vec<usize> {
        children[parent]
            .iter()
            .copied()
            .filter(|&child| classes.contains(&read[child].entity.class))
            .collect()
    };
    out.push(root);
    match read[root].entity.class {
        Class::AdminDomain => {
            for child in of(root, &[Class::Location]) {
                out.push(child);
            }
            for child in of(root, &[Class::Contact]) {
                out.push(child);
            }
        }
        _ => {
            let endpoints = of(
                root,
                &[Class::ComputingEndpoint, Class::CloudComputingEndpoint],
            );
            for endpoint in endpoints {
                out.push(endpoint);
                out.extend(of(endpoint, &[Class::AccessPolicy]));
            }
            let managers = of(
                root,
                &[Class::ComputingManager, Class::CloudComputingManager],
            );
            for &manager in &managers {
                out.push(manager);
                out.extend(of(
                    manager,
                    &[
                        Class::ComputingManagerAccelerator,
                        Class::CloudComputingManagerAccelerator,
                    ],
                ));
                for environment in of(manager, &[Class::ExecutionEnvironment]) {
                    out.push(environment);
                    out.extend(of(environment, &[Class::AcceleratorEnvironment]));
                }
            }
            for share in of(root, &[Class::ComputingShare, Class::CloudComputingShare]) {
                out.push(share);
                out.extend(of(share, &[Class::MappingPolicy]));
                out.extend(of(
                    share,
                    &[
                        Class::ComputingShareAccelerator,
                        Class::CloudComputingShareAccelerator,
                    ],
                ));
            }
            // A cloud lists its flavors and images after its shares.
            for &manager in &managers {
                for flavor in of(manager, &[Class::CloudComputingInstanceType]) {
                    out.push(flavor);
                    out.extend(of(flavor, &[Class::CloudComputingVirtualAccelerator]));
                }
                out.extend(of(manager, &[Class::CloudComputingImage]));
            }
        }
    }
}
