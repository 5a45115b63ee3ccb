//! A small graph drawn as SVG on the server: layout-rs places the nodes (layered,
//! Sugiyama-style) and routes the edges; this module only writes what it drew, each
//! node a link (keyboard-focusable, with its full name as a title), an edge's label (if
//! it has one) as text in the room layout-rs leaves for it on the edge, every label
//! escaped. No script and no inline style: the page's style sheet colours it.

use layout::core::base::Orientation;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;
use maud::{Markup, PreEscaped, html};

/// Longest label drawn in a node (the title has the whole name).
const LABEL_CHARS: usize = 36;
/// The width the page's monospace label font gives one character (px, a little over
/// its 13 px size's advance), so each box is as wide as its label and no two overlap.
const CHAR_WIDTH: f64 = 8.5;
/// A node box's height and the room left and right of its label (px).
const BOX_HEIGHT: f64 = 28.;
const BOX_PADDING: f64 = 16.;

/// One node: what it says, where it links, whether it is the page's own symbol.
#[derive(Debug, Clone)]
pub struct Node {
    /// The full name.
    pub label: String,
    /// The page it links to.
    pub href: String,
    /// The graph's subject (drawn heavier).
    pub target: bool,
}

/// Draws `nodes` and `edges` (index pairs, from → to) as an SVG figure titled `title`.
pub fn render(title: &str, nodes: &[Node], edges: &[(usize, usize)]) -> Markup {
    let unlabelled: Vec<_> = edges.iter().map(|&(from, to)| (from, to, "")).collect();
    render_labelled(title, nodes, &unlabelled)
}

/// Draws `nodes` and `edges` (from, to, label) as an SVG figure titled `title`: each
/// non-empty label is written on its edge (a relation's name), so what ties two nodes
/// reads as text, not as a colour or a line style.
pub fn render_labelled(title: &str, nodes: &[Node], edges: &[(usize, usize, &str)]) -> Markup {
    if nodes.is_empty() {
        return html! {};
    }
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let handles: Vec<_> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let label = short(&n.label);
            let width = label.chars().count() as f64 * CHAR_WIDTH + BOX_PADDING;
            let shape = ShapeKind::new_box(&label);
            let elem = Element::create_with_properties(
                shape,
                StyleAttr::simple(),
                Orientation::TopToBottom,
                Point::new(width, BOX_HEIGHT),
                i.to_string(),
            );
            vg.add_node(elem)
        })
        .collect();
    for &(from, to, label) in edges {
        if from != to && from < nodes.len() && to < nodes.len() {
            vg.add_edge(Arrow::simple(&short(label)), handles[from], handles[to]);
        }
    }
    let mut svg = Svg {
        nodes,
        out: String::new(),
        open: false,
        size: Point::zero(),
    };
    vg.do_it(false, false, false, &mut svg);
    if svg.open {
        svg.out.push_str("</a>");
    }
    let (w, h) = (svg.size.x.ceil(), svg.size.y.ceil());
    html! {
        figure class="graph" {
            figcaption { (title) }
            svg class="graph" xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(title)
                width=(w) height=(h) viewBox={ "0 0 " (w) " " (h) } {
                defs {
                    marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse" {
                        polygon points="0,0 10,5 0,10" {}
                    }
                }
                (PreEscaped(svg.out))
            }
        }
    }
}

fn short(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        return label.to_string();
    }
    let tail: Vec<char> = label.chars().rev().take(LABEL_CHARS - 1).collect();
    format!("…{}", tail.into_iter().rev().collect::<String>())
}

/// XML text and attribute escaping.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The backend layout-rs draws into: a node's box opens its link, its label closes it.
struct Svg<'a> {
    nodes: &'a [Node],
    out: String,
    open: bool,
    size: Point,
}

impl Svg<'_> {
    fn grow(&mut self, p: Point) {
        self.size.x = self.size.x.max(p.x + 5.);
        self.size.y = self.size.y.max(p.y + 5.);
    }
}

impl RenderBackend for Svg<'_> {
    fn draw_rect(
        &mut self,
        xy: Point,
        size: Point,
        _look: &StyleAttr,
        properties: Option<String>,
        _clip: Option<ClipHandle>,
    ) {
        self.grow(xy.add(size));
        if self.open {
            self.out.push_str("</a>");
            self.open = false;
        }
        let node = properties
            .and_then(|p| p.parse::<usize>().ok())
            .and_then(|i| self.nodes.get(i));
        if let Some(n) = node {
            let class = if n.target { " class=\"target\"" } else { "" };
            self.out.push_str(&format!(
                "<a href=\"{}\"{class}><title>{}</title>",
                esc(&n.href),
                esc(&n.label)
            ));
            self.open = true;
        }
        self.out.push_str(&format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\"/>",
            xy.x, xy.y, size.x, size.y
        ));
    }

    fn draw_line(&mut self, start: Point, stop: Point, _look: &StyleAttr, _p: Option<String>) {
        self.grow(start);
        self.grow(stop);
        self.out.push_str(&format!(
            "<path d=\"M {:.1} {:.1} L {:.1} {:.1}\"/>",
            start.x, start.y, stop.x, stop.y
        ));
    }

    fn draw_circle(&mut self, xy: Point, size: Point, _look: &StyleAttr, _p: Option<String>) {
        self.grow(xy.add(size));
    }

    /// A node's label (its box left the link open) or an edge's (layout-rs draws it in
    /// the connector it placed on the edge; classed so the sheet can set it apart).
    fn draw_text(&mut self, xy: Point, text: &str, _look: &StyleAttr) {
        let class = if self.open {
            ""
        } else {
            " class=\"edge-label\""
        };
        self.out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\"{class} text-anchor=\"middle\" dominant-baseline=\"middle\">{}</text>",
            xy.x,
            xy.y,
            esc(text)
        ));
        if self.open {
            self.out.push_str("</a>");
            self.open = false;
        }
    }

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _dashed: bool,
        head: (bool, bool),
        _look: &StyleAttr,
        _p: Option<String>,
        _text: &str,
    ) {
        if path.len() < 2 {
            return;
        }
        for (a, b) in path {
            self.grow(*a);
            self.grow(*b);
        }
        let mut d = format!(
            "M {:.1} {:.1} C {:.1} {:.1}, {:.1} {:.1}, {:.1} {:.1}",
            path[0].0.x,
            path[0].0.y,
            path[0].1.x,
            path[0].1.y,
            path[1].0.x,
            path[1].0.y,
            path[1].1.x,
            path[1].1.y
        );
        for (a, b) in path.iter().skip(2) {
            d.push_str(&format!(" S {:.1} {:.1}, {:.1} {:.1}", a.x, a.y, b.x, b.y));
        }
        let start = if head.0 {
            " marker-start=\"url(#arrow)\""
        } else {
            ""
        };
        let end = if head.1 {
            " marker-end=\"url(#arrow)\""
        } else {
            ""
        };
        self.out.push_str(&format!("<path d=\"{d}\"{start}{end}/>"));
    }

    fn create_clip(&mut self, _xy: Point, _size: Point, _rounded_px: usize) -> ClipHandle {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_is_a_link_and_every_label_is_escaped() {
        let nodes = vec![
            Node {
                label: "parse<T>".into(),
                href: "/web/w/1/symbol?s=a&b".into(),
                target: true,
            },
            Node {
                label: "caller\"".into(),
                href: "/x".into(),
                target: false,
            },
        ];
        let svg = render("g", &nodes, &[(1, 0)]).into_string();
        assert_eq!(svg.matches("<a href=").count(), 2, "{svg}");
        assert!(svg.contains("parse&lt;T&gt;"), "{svg}");
        assert!(svg.contains("href=\"/web/w/1/symbol?s=a&amp;b\""), "{svg}");
        assert!(!svg.contains("parse<T>"), "{svg}");
        assert!(svg.contains("marker-end"), "{svg}");
    }

    #[test]
    fn an_edge_label_is_drawn_as_text_of_its_own_class() {
        let nodes: Vec<Node> = ["Ledger", "Billing"]
            .iter()
            .map(|l| Node {
                label: (*l).into(),
                href: format!("#{l}"),
                target: false,
            })
            .collect();
        let svg = render_labelled("g", &nodes, &[(0, 1, "writes_to<")]).into_string();
        assert!(
            svg.contains("class=\"edge-label\"") && svg.contains(">writes_to&lt;</text>"),
            "{svg}"
        );
        assert_eq!(svg.matches("<a href=").count(), 2, "{svg}");
        assert!(svg.contains(">Ledger</text></a>"), "{svg}");
    }
}
