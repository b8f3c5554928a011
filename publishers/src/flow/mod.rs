//! The site's provide flow as a library call, in the manner of accelfed-accounting's meter flow:
//! [`provide_site`] takes a plan (what to do, decided by the caller from its configuration and
//! flags) and returns a report (what was gathered, what failed and whether a retry may help, what
//! was rendered, where it was published, whether the last good document was saved or published
//! instead, and why), and the binary only maps the report to log lines and an exit status.
//!
//! It lives here because publishing is its last and largest step (push, write, keep-last-good);
//! gathering is one call into accelfed-provider, which does not depend on the publishers.

mod fall_back;
pub mod last_good;
mod provide;

pub use fall_back::{Kept, LastGood, publish_last_good};
pub use last_good::{Checked, SavedAs};
pub use provide::{ProvidePlan, ProvideReport, Provided, Pushed, Sent, Written, provide_site};
