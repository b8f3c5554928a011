//! `accelfed report`: the repository to read, the grouping, filters and output format.

use std::path::PathBuf;

/// The default repository: the SQLite file `accelfed serve` keeps unless configured otherwise.
pub const DEFAULT_DATABASE: &str = "/var/lib/accelfed/accounting.sqlite";

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The repository: a SQLite file path or a postgres:// URL.
    #[arg(long, env = "ACCELFED_DATABASE", default_value = DEFAULT_DATABASE)]
    pub database: String,
    /// Group by one or two of vo, site, model, month and user, comma-separated (`vo,month`: a row
    /// per VO and month; `user` reads the records, not the summaries).
    #[arg(long, default_value = "vo")]
    pub by: accelfed_accounting::report::Grouping,
    /// First month to include (YYYY-MM).
    #[arg(long)]
    pub from: Option<accelfed_accounting::repository::Period>,
    /// Last month to include (YYYY-MM).
    #[arg(long)]
    pub to: Option<accelfed_accounting::repository::Period>,
    /// Only this VO.
    #[arg(long)]
    pub vo: Option<String>,
    /// Only this site.
    #[arg(long)]
    pub site: Option<String>,
    /// Only this GPU model, matched by words as `query --model` does (`A100` finds
    /// `NVIDIA A100-SXM4-40GB`).
    #[arg(long)]
    pub model: Option<String>,
    /// Instead of a report, check that no site's GPU-hours per model and month exceed its
    /// installed GPUs x the month's hours: lists every site-month-model that does, and the records
    /// sites hold back (their own capacity check doubts them; as their last `ship` reported),
    /// exit 1 if any.
    #[arg(long)]
    pub check: bool,
    /// Idle GPU-hours per group instead of usage: the allocated GPU-hours of records that carry
    /// an ActiveDuration, the idle share of them, and the GPU-hours of records that carry none
    /// (table, csv or json).
    #[arg(long, conflicts_with = "check")]
    pub idle: bool,
    /// Output format: table, csv, json or svg (GPU-hours per group per month, stacked bars).
    #[arg(short, long, default_value = "table", value_parser = report_format_parser())]
    pub format: accelfed_accounting::report::ReportFormat,
    /// Write to this file (replaced atomically) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// `report --format`, as `provide --format`'s parser: the names as possible values.
fn report_format_parser()
-> impl clap::builder::TypedValueParser<Value = accelfed_accounting::report::ReportFormat> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["table", "csv", "json", "svg"])
        .try_map(|name| name.parse::<accelfed_accounting::report::ReportFormat>())
}
