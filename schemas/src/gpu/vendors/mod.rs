//! Vendor name tables for sources that name a GPU only by its PCI device id or by a vendor's own
//! product label (the AMD GPU labeller's `product-name`, Intel's NFD rules' `product`): each maps
//! to the vendor's own marketing name, which the model catalogue then makes canonical.

pub mod amd;
pub mod intel;
