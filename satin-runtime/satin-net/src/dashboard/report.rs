//! `--report FILE`: what the dashboard showed last, as one self-contained
//! HTML page — the dashboard's own page with the run's final status in
//! it, so that it opens offline, on any machine, long after the run.

use std::path::Path;

use serde_json::Value;

/// Where the page takes its data from a report instead of the server.
const DATA_MARK: &str = "<!-- report data -->";

/// The page of a report: the dashboard's page with `status` in it.
pub(crate) fn page(status: &Value) -> String {
    // `</` inside a string would end the script early: `<\/` reads the same.
    let json = status.to_string().replace("</", "<\\/");
    super::PAGE.replacen(DATA_MARK, &format!("<script>window.SATIN_REPORT = {json};</script>"), 1)
}

/// Writes the report of `status` to `path` (whole or not at all: a page
/// written beside it, then renamed over it).
pub(crate) fn write(path: &Path, status: &Value) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    std::fs::write(&tmp, page(status))?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_the_status_and_no_early_end_of_its_script() {
        let status = serde_json::json!({ "app": "x", "events": [{ "text": "</script><b>" }] });
        let page = page(&status);
        assert!(page.contains("window.SATIN_REPORT = {"), "the data is not in the page");
        assert!(!page.contains("</script><b>"), "a string ended the script");
        assert!(page.contains(r"<\/script><b>"));
        assert_eq!(page.matches("<script>").count(), super::super::PAGE.matches("<script>").count() + 1);
    }
}
