//! Texts to token ids for either kind of model, behind one type: the Hugging Face
//! tokenizer of a `tokenizer.json` (all-MiniLM-L6-v2's WordPiece), or the Unigram
//! tokenizer of an E5S1 file (multilingual-e5-small), whose model was trained with a
//! prefix saying whether a text is a query or a document.

use rayon::prelude::*;
use tokenizers::Tokenizer;

use crate::e5s1::unigram::Unigram;
use crate::error::EmbedError;

/// What a text is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Something stored and searched: a chunk, a note.
    Document,
    /// A search typed against the documents.
    Query,
}

/// A model's tokenizer, its length limit and its prefixes. (One per [`crate::Embedder`],
/// never in a collection: the Hugging Face variant's ~1.5 KB is not worth a box.)
#[allow(clippy::large_enum_variant)]
pub enum TextEncoder {
    /// A `tokenizer.json`, truncation set to the model's length; no prefixes.
    Hf(Tokenizer),
    /// An E5S1 vocabulary; inputs are `<s>`, at most `max_tokens − 2` pieces, `</s>`.
    E5 {
        /// The tokenizer.
        unigram: Unigram,
        /// The model's positions.
        max_tokens: usize,
    },
}

impl TextEncoder {
    /// The prefix multilingual-e5 expects before a text of `role` (what it was trained
    /// with: "query: " for searches, "passage: " for what is searched); none for
    /// MiniLM, which has one space for both.
    fn prefix(&self, role: Role) -> &'static str {
        match (self, role) {
            (TextEncoder::Hf(_), _) => "",
            (TextEncoder::E5 { .. }, Role::Document) => "passage: ",
            (TextEncoder::E5 { .. }, Role::Query) => "query: ",
        }
    }

    /// Each text's ids as `role` (prefix and special tokens included, truncated to the
    /// model's length), tokenized on all cores.
    pub fn ids(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<u32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            TextEncoder::Hf(tokenizer) => Ok(tokenizer
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| EmbedError::Tokenize {
                    index: 0,
                    reason: e.to_string(),
                })?
                .into_iter()
                .map(|e| e.get_ids().to_vec())
                .collect()),
            TextEncoder::E5 {
                unigram,
                max_tokens,
            } => {
                let prefix = self.prefix(role);
                Ok(texts
                    .par_iter()
                    .map(|t| {
                        let mut content = unigram.content_ids(&format!("{prefix}{t}"));
                        content.truncate(max_tokens.saturating_sub(2));
                        let mut ids = Vec::with_capacity(content.len() + 2);
                        ids.push(unigram.bos());
                        ids.extend(content);
                        ids.push(unigram.eos());
                        ids
                    })
                    .collect())
            }
        }
    }

    /// How many tokens `text` is as a document, prefix and special tokens included,
    /// before truncation.
    pub fn count(&self, text: &str) -> Result<usize, EmbedError> {
        match self {
            TextEncoder::Hf(tokenizer) => {
                let bad = |e: tokenizers::Error| EmbedError::Tokenize {
                    index: 0,
                    reason: e.to_string(),
                };
                let mut tokenizer = tokenizer.clone();
                tokenizer.with_truncation(None).map_err(bad)?;
                Ok(tokenizer.encode(text, true).map_err(bad)?.len())
            }
            TextEncoder::E5 { unigram, .. } => {
                let prefix = self.prefix(Role::Document);
                Ok(unigram.content_ids(&format!("{prefix}{text}")).len() + 2)
            }
        }
    }
}
