//! The 8-bit path (the default where the CPU has AVX-512 VNNI) against the f32 one on
//! the same weights: the tiny random-weight model always, the real all-MiniLM-L6-v2 on
//! real text when it is available (it is in CI: `LOCI_TEST_MODEL_WHEEL`). On a CPU
//! without the instructions the 8-bit tests say so and skip: the encoder never runs
//! that path there, which `auto_precision_is_int8_exactly_where_the_cpu_has_vnni`
//! checks.

use crate::common;

use common::{cosine, real_models_dir, write_tiny_model};
use loci_embed::{Embedder, Precision, pinned};

/// The least cosine accepted between a text's 8-bit and f32 vectors. Measured on the
/// real model over loci's docs: worst ~0.996, mean ~0.999 (see docs/models.md).
const MIN_COSINE: f32 = 0.99;

fn int8_runs_here() -> bool {
    match Precision::Int8.resolve() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// loci's own docs: its Markdown pages, in name order (not the folders beside them,
/// `docs/screenshots/`).
fn doc_pages() -> Vec<std::path::PathBuf> {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs");
    let mut files: Vec<_> = std::fs::read_dir(docs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

/// The paragraphs of loci's docs (blank-line separated, at least 40 characters).
fn doc_paragraphs() -> Vec<String> {
    doc_pages()
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .split("\n\n")
                .map(str::trim)
                .filter(|p| p.len() >= 40)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The worst and mean cosine between each text's vectors from `a` and from `b`.
fn agreement(a: &Embedder, b: &Embedder, texts: &[&str]) -> (f32, f32) {
    let (va, vb) = (a.embed(texts).unwrap(), b.embed(texts).unwrap());
    let c: Vec<f32> = va.iter().zip(&vb).map(|(x, y)| cosine(x, y)).collect();
    let worst = c.iter().copied().fold(f32::INFINITY, f32::min);
    (worst, c.iter().sum::<f32>() / c.len() as f32)
}

#[test]
fn auto_precision_is_int8_exactly_where_the_cpu_has_vnni() {
    let tmp = tempfile::tempdir().unwrap();
    write_tiny_model(tmp.path(), 32);
    let auto = Embedder::load_with_precision(tmp.path(), Precision::Auto).unwrap();
    let f32 = Embedder::load_with_precision(tmp.path(), Precision::F32).unwrap();
    assert_eq!(f32.precision(), Precision::F32);
    if int8_runs_here() {
        assert_eq!(auto.precision(), Precision::Int8);
    } else {
        assert_eq!(auto.precision(), Precision::F32);
        let err = Embedder::load_with_precision(tmp.path(), Precision::Int8).unwrap_err();
        assert!(err.to_string().contains("AVX-512 VNNI"), "{err}");
    }
}

#[test]
fn unknown_precision_is_an_error_naming_the_value() {
    let err = "fp16".parse::<Precision>().unwrap_err();
    assert_eq!(err.kind(), "bad_precision");
    assert!(err.to_string().contains("\"fp16\""), "{err}");
    assert!(err.to_string().contains("auto, f32 or int8"), "{err}");
    assert_eq!(" F32 ".parse::<Precision>().unwrap(), Precision::F32);
    assert_eq!("".parse::<Precision>().unwrap(), Precision::Auto);
}

#[test]
fn int8_vectors_are_within_cosine_0_99_of_f32_on_the_tiny_model() {
    if !int8_runs_here() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    write_tiny_model(tmp.path(), 64);
    let int8 = Embedder::load_with_precision(tmp.path(), Precision::Int8).unwrap();
    let f32 = Embedder::load_with_precision(tmp.path(), Precision::F32).unwrap();
    assert_eq!(int8.precision(), Precision::Int8);
    let texts = [
        "the cat sits on the mat",
        "a dog is running fast",
        "memory about the code graph index",
        "the function changed, slow or fast?",
        "note",
    ];
    let (worst, _) = agreement(&int8, &f32, &texts);
    assert!(worst >= MIN_COSINE, "worst cosine {worst}");
    // Not the same arithmetic: a kernel that fell back to f32 would not show.
    let (a, b) = (int8.embed(&texts).unwrap(), f32.embed(&texts).unwrap());
    assert!(a != b, "the 8-bit vectors equal the f32 ones bit for bit");
}

#[test]
fn int8_vectors_are_within_cosine_0_99_of_f32_on_real_text() {
    let Some(models) = real_models_dir() else {
        return;
    };
    if !int8_runs_here() {
        return;
    }
    let int8 = Embedder::load_installed_with_precision(&models, Precision::Int8).unwrap();
    let f32 = Embedder::load_installed_with_precision(&models, Precision::F32).unwrap();
    let paragraphs = doc_paragraphs();
    let texts: Vec<&str> = paragraphs.iter().step_by(4).map(String::as_str).collect();
    assert!(texts.len() >= 50, "{} paragraphs", texts.len());
    let (worst, mean) = agreement(&int8, &f32, &texts);
    eprintln!(
        "{} paragraphs: worst cosine {worst}, mean {mean}",
        texts.len()
    );
    assert!(worst >= MIN_COSINE, "worst cosine {worst} (mean {mean})");
}

#[test]
fn int8_ranks_doc_sections_for_their_headings_as_f32_does() {
    let Some(models) = real_models_dir() else {
        return;
    };
    if !int8_runs_here() {
        return;
    }
    // Every `## ` section of the docs is a document; its heading (a query a user might
    // type) is searched against all of them by cosine, in both precisions.
    let mut sections = Vec::new();
    for f in doc_pages() {
        let text = std::fs::read_to_string(f).unwrap();
        for s in text.split("\n## ").skip(1) {
            let (heading, body) = s.split_once('\n').unwrap_or((s, ""));
            if body.trim().len() >= 80 {
                sections.push((heading.trim().to_string(), body.trim().to_string()));
            }
        }
    }
    assert!(sections.len() >= 30, "{} sections", sections.len());
    let queries: Vec<&str> = sections.iter().map(|s| s.0.as_str()).collect();
    let bodies: Vec<&str> = sections.iter().map(|s| s.1.as_str()).collect();
    let rank = |e: &Embedder| -> Vec<Vec<usize>> {
        let (q, d) = (e.embed(&queries).unwrap(), e.embed(&bodies).unwrap());
        q.iter()
            .map(|q| {
                let mut order: Vec<usize> = (0..d.len()).collect();
                let score = |i: usize| cosine(q, &d[i]);
                order.sort_by(|&a, &b| score(b).total_cmp(&score(a)));
                order.truncate(5);
                order
            })
            .collect()
    };
    let int8 = Embedder::load_installed_with_precision(&models, Precision::Int8).unwrap();
    let f32 = Embedder::load_installed_with_precision(&models, Precision::F32).unwrap();
    let (a, b) = (rank(&int8), rank(&f32));
    let n = a.len() as f32;
    let top1 = a.iter().zip(&b).filter(|(x, y)| x[0] == y[0]).count() as f32 / n;
    let top5 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.iter().filter(|i| y.contains(i)).count() as f32 / 5.0)
        .sum::<f32>()
        / n;
    eprintln!(
        "{} queries: top-1 agreement {top1}, top-5 overlap {top5}",
        a.len()
    );
    assert!(top1 >= 0.9 && top5 >= 0.85, "top-1 {top1}, top-5 {top5}");
}

#[test]
fn real_model_int8_default_keeps_the_pinned_model_id_and_dimension() {
    let Some(models) = real_models_dir() else {
        return;
    };
    let e = Embedder::load_installed_with_precision(&models, Precision::Auto).unwrap();
    assert_eq!((e.dim(), e.model_id()), (pinned::DIM, pinned::MODEL_ID));
}
