//! The accounting charts, from the repository's summaries, drawn by the accounting reports' SVG
//! renderer: GPU-hours per VO per month for the whole federation, and, when the form names a VO,
//! that VO's GPU-hours per site; each with its largest series and the rest added up
//! ([`super::top`]).

use accelfed_accounting::report::render_svg;
use accelfed_accounting::repository::{Dimension, Repository, SummaryFilter, SummaryQuery};

use super::page::Charts;

/// The charts for the page; a repository that fails gives a message, never a failed page.
pub async fn charts(repository: Option<&Repository>, vo: Option<&str>) -> Charts {
    let Some(repository) = repository else {
        return Charts::NoRepository;
    };
    let mut out = Vec::new();
    let mut wanted = vec![(
        "GPU-hours per VO per month".to_owned(),
        Dimension::Vo,
        SummaryFilter::default(),
    )];
    if let Some(vo) = vo {
        wanted.push((
            format!("GPU-hours of VO {vo} per site per month"),
            Dimension::Site,
            SummaryFilter {
                vo: Some(vo.to_owned()),
                ..SummaryFilter::default()
            },
        ));
    }
    for (heading, series, filter) in wanted {
        let query = SummaryQuery {
            group_by: vec![series, Dimension::Month],
            filter,
        };
        match repository.summaries(query).await {
            Ok(rows) if rows.is_empty() => {}
            Ok(rows) => {
                let rows = super::top::top_series(series, rows, super::top::TOP_SERIES);
                out.push((heading, render_svg(series, &rows, None, None)));
            }
            Err(error) => {
                tracing::warn!(%error, "web page: accounting summaries unavailable");
                return Charts::Unavailable(error.to_string());
            }
        }
    }
    Charts::Svg(out)
}
