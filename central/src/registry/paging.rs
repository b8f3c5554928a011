//! `limit` and `page` of `GET /registry/v1/offers`: an answer holds at most [`MAX_PER_PAGE`]
//! offers, whatever sites push (a document of 9,000 flavors added 5.2 MB to every answer, issue
//! #30). Taken out of the query string before the filter reads the rest (the filter refuses
//! parameters it does not know). The answer says how many offers the filter selects in all
//! (`X-Total-Count`) and where the next page is (`Link: <...>; rel="next"`, RFC 8288).

/// The most offers one answer holds, and the default page size.
pub const MAX_PER_PAGE: usize = 10_000;
/// The highest page number asked for (past the last page the list is empty).
pub const MAX_PAGE: usize = 1_000_000;

/// Which slice of the selected offers an answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub limit: usize,
    /// 1-based.
    pub page: usize,
}

impl Default for Paging {
    fn default() -> Self {
        Self {
            limit: MAX_PER_PAGE,
            page: 1,
        }
    }
}

impl Paging {
    /// The paging of `query` (a raw query string) and the query without it, or why it is refused.
    pub fn split(query: &str) -> Result<(Self, String), String> {
        let mut paging = Self::default();
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "limit" => paging.limit = number(value, "limit", MAX_PER_PAGE)?,
                "page" => paging.page = number(value, "page", MAX_PAGE)?,
                _ => rest.push(pair),
            }
        }
        Ok((paging, rest.join("&")))
    }

    /// The positions of `total` selected offers this page holds.
    pub fn range(&self, total: usize) -> std::ops::Range<usize> {
        let start = (self.page - 1).saturating_mul(self.limit).min(total);
        start..start.saturating_add(self.limit).min(total)
    }

    /// The next page's query (`rest` with this paging moved on), when offers remain past this one.
    pub fn next(&self, rest: &str, total: usize) -> Option<String> {
        if self.range(total).end >= total || self.page >= MAX_PAGE {
            return None;
        }
        let paging = format!("limit={}&page={}", self.limit, self.page + 1);
        Some(if rest.is_empty() {
            paging
        } else {
            format!("{rest}&{paging}")
        })
    }
}

fn number(value: &str, name: &str, max: usize) -> Result<usize, String> {
    value
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| {
            format!(
                "{name} must be a whole number from 1 to {max}, not {:?}",
                accelfed_schemas::excerpt::excerpt(value)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_is_taken_out_of_the_query_and_walks_to_the_end() {
        let (paging, rest) = Paging::split("model=A100&limit=2&fresh=true&page=2").unwrap();
        assert_eq!(paging, Paging { limit: 2, page: 2 });
        assert_eq!(rest, "model=A100&fresh=true");
        assert_eq!(paging.range(5), 2..4);
        assert_eq!(
            paging.next(&rest, 5).as_deref(),
            Some("model=A100&fresh=true&limit=2&page=3")
        );
        let last = Paging { limit: 2, page: 3 };
        assert_eq!(last.range(5), 4..5);
        assert_eq!(last.next(&rest, 5), None);
        assert_eq!(Paging { limit: 2, page: 9 }.range(5), 5..5);
        assert_eq!(
            Paging::split("").unwrap(),
            (Paging::default(), String::new())
        );
    }

    #[test]
    fn a_limit_or_page_out_of_range_is_refused_by_name() {
        for query in [
            "limit=0",
            "limit=10001",
            "limit=x",
            "page=0",
            "page=-1",
            "limit",
        ] {
            let error = Paging::split(query).unwrap_err();
            assert!(error.contains("must be a whole number"), "{query}: {error}");
        }
    }
}
