"""From a doc comment's text to a query: its first sentence (CodeSearchNet's rule).

`doc_lines` takes the raw comment (markers and all) of one language and gives its text
lines; `first_sentence` cuts the first sentence of the first paragraph; `query_of`
cleans it and applies the filters (at least 4 words, not TODO/Deprecated, not a
parameter list). Pure functions: the unit tests call them directly.
"""
import inspect
import re

MIN_WORDS = 4
MAX_WORDS = 60

# Lines that end the summary paragraph: tag blocks and section headings.
_SECTION = re.compile(
    r"^\s*(@\w+|:(param|type|returns?|rtype|raises?|arg|keyword|var|ivar|cvar)\b|"
    r"(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?|See Also|"
    r"Attributes|Usage|Warning|Panics|Errors|Safety)\s*:?\s*$|#{1,6}\s|[-=]{3,}\s*$|```|>>>)")
_ABBREV = {"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "mr.", "dr.", "st.", "resp.", "incl.",
           "fig.", "eq.", "ca.", "al.", "viz.", "ex."}
_SKIP_FIRST = re.compile(r"^\W*(todo|fixme|xxx|hack|deprecated|@deprecated|internal use only)\b", re.I)
_PARAMS_ONLY = re.compile(r"^\s*(@\w+|:\w+|(args|arguments|parameters|params|returns?)\s*:)", re.I)


def doc_lines(lang, raw):
    """The text lines of one raw doc comment (or docstring value, for Python)."""
    if lang == "py":
        return inspect.cleandoc(raw).splitlines()
    out = []
    if raw.startswith("/*"):
        body = raw[3:] if raw.startswith(("/**", "/*!")) else raw[2:]
        if body.endswith("*/"):
            body = body[:-2]
        for line in body.splitlines():
            line = re.sub(r"^\s*\*(?!/)", "", line, count=1) if re.match(r"^\s*\*", line) else line
            out.append(line.strip())
        return out
    for line in raw.splitlines():
        s = line.strip()
        for p in ("///", "//!", "//"):
            if s.startswith(p):
                s = s[len(p):]
                break
        out.append(s.strip())
    return out


def _summary_paragraph(lines):
    para = []
    for line in lines:
        if _SECTION.match(line):
            break
        if not line.strip():
            if para:
                break
            continue
        para.append(line.strip())
    return " ".join(para)


def clean(text):
    """Markup to words: links, intra-doc links, JSDoc {@link}, rst roles, backticks, tags."""
    text = re.sub(r"\{@(?:link|linkcode|linkplain|code)\s+([^}|\s]+)(?:[|\s]+([^}]*))?\}",
                  lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)           # [text](url)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)            # [text][ref]
    text = re.sub(r"\[(`[^`\]]+`)\]", r"\1", text)                   # [`Foo`]
    text = re.sub(r":[\w:.-]+:`~?([^`]*)`", r"\1", text)            # :func:`foo`
    text = re.sub(r"</?[A-Za-z][^>]*>", "", text)                    # <code>, <p/>
    text = text.replace("``", "").replace("`", "")
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def first_sentence(text):
    """The first sentence of `text` (one paragraph, already cleaned): up to the first
    `.`, `!` or `?` followed by white space or the end, not after a known abbreviation
    (e.g., i.e., etc., ...). A dot inside a token (`os.path`, `1.5`) never ends one."""
    for m in re.finditer(r"[.!?](?=\s|$)", text):
        end = m.end()
        word = text[:end].rsplit(" ", 1)[-1].lower()
        if word.lstrip("(") in _ABBREV:
            continue
        return text[:end].strip()
    return text.strip()


def words(text):
    return [w for w in text.split() if re.search(r"[A-Za-z]", w)]


def query_of(lang, raw):
    """The query for a raw doc comment, or (None, why it is dropped)."""
    lines = doc_lines(lang, raw)
    para = clean(_summary_paragraph(lines))
    if not para:
        return None, "empty"
    if _PARAMS_ONLY.match(para):
        return None, "parameter list"
    s = first_sentence(para)
    if _SKIP_FIRST.match(s):
        return None, "todo/deprecated"
    n = len(words(s))
    if n < MIN_WORDS:
        return None, "under 4 words"
    if n > MAX_WORDS:
        s = " ".join(s.split()[:MAX_WORDS])
    return s, None


def normalized(q):
    return re.sub(r"\s+", " ", q.strip().lower()).rstrip(".")
