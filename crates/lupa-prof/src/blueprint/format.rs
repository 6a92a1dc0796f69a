//! A [`Blueprint`] as a [`Report`]: its formats and their default files; the
//! picture's [`Kind`] is the report's option.

use std::io::{self, Write};

use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

use super::model::{Blueprint, Kind, to_text};
use super::{html, svg};

/// The formats of a blueprint report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlueprintFormat {
    /// The methods that ran, then the calls.
    Text,
    /// The model as JSON.
    Json,
    /// The picture.
    Svg,
    /// The HTML page.
    Html,
}

impl BlueprintFormat {
    /// Every format, the default first.
    pub const ALL: [BlueprintFormat; 4] = [
        BlueprintFormat::Text,
        BlueprintFormat::Json,
        BlueprintFormat::Svg,
        BlueprintFormat::Html,
    ];
}

impl ReportFormat for BlueprintFormat {
    fn info(self) -> FormatInfo {
        let (name, description, file) = match self {
            BlueprintFormat::Text => (
                "text",
                "The methods that ran by time (with executions, sends, flags), then the calls",
                None,
            ),
            BlueprintFormat::Json => (
                "json",
                "The blueprint model as JSON (with a version field)",
                Some("blueprint.json"),
            ),
            BlueprintFormat::Svg => (
                "svg",
                "The picture: methods as boxes, height = time, width = executions",
                Some("blueprint.svg"),
            ),
            BlueprintFormat::Html => (
                "html",
                "One HTML page: the picture, its legend and each method's numbers and calls",
                Some("blueprint.html"),
            ),
        };
        FormatInfo {
            name,
            aliases: &[],
            description,
            default_file: file.map_or(DefaultFile::Stdout, DefaultFile::Fixed),
        }
    }
}

impl Report for Blueprint {
    type Format = BlueprintFormat;
    type Options = Kind;
    const FORMATS: &'static [BlueprintFormat] = &BlueprintFormat::ALL;
    const NOUN: &'static str = "blueprint";

    fn write(&self, format: BlueprintFormat, kind: &Kind, w: &mut dyn Write) -> io::Result<()> {
        let text = match format {
            BlueprintFormat::Text => to_text(self),
            BlueprintFormat::Json => self.to_json(),
            BlueprintFormat::Svg => svg::to_string(self, *kind),
            BlueprintFormat::Html => html::to_string(self, *kind),
        };
        w.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_writers() {
        crate::report::api::tests::check_formats::<Blueprint>();
        let bp = crate::blueprint::model::tests::sample();
        assert_eq!(
            bp.render(BlueprintFormat::Text, &Kind::Structural),
            to_text(&bp)
        );
        assert_eq!(
            bp.render(BlueprintFormat::Svg, &Kind::Behavioral),
            svg::to_string(&bp, Kind::Behavioral)
        );
    }
}
