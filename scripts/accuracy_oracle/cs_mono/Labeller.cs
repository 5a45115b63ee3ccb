// Labels the calls of one C# assembly from its IL and its debug symbols, for loci's
// accuracy harness (../cs_mono.py).
//
// Usage: mono Labeller.exe ASSEMBLY.dll (with ASSEMBLY.dll.mdb beside it, as Mono's mcs
// writes it with -debug). The IL is read with Mono.Cecil, the line table with Mono's own
// .mdb reader (Mono.CompilerServices.SymbolWriter). One JSON object is printed:
//
//   {"defs":  [{"path","name","chain":[...],"start","name_line","end_line","params","varargs","explicit"}],
//    "units": [{"path","name","start","name_line"}],
//    "calls": [{"callee": DEF, "path", "line", "member", "caller": UNIT or -1}],
//    "dropped": {why: count}}
//
// A def is a method written in the source with a body and a sequence point (not a
// constructor, an accessor, an operator, nor anything the compiler generated; an
// explicit interface implementation `I.M` is one, marked "explicit", named `M`);
// "chain" holds its enclosing types' names, outermost first (no namespace). A unit is what holds a call: a method, constructor, operator,
// property/indexer/event (for its accessors), else the innermost type (field
// initialisers); lambdas, anonymous methods, iterators and async methods (the compiler's
// `<Foo>m__0`, `<Foo>c__Iterator0`, ..) roll up to the unit around them in the source.
// A call is a `call`/`callvirt` whose callee resolves to one of the defs (static
// dispatch: through an interface or a base class names that type's method), at the
// line of the sequence point mcs marks it with, which is the callee's name: a call whose
// sequence point does not spell the callee's name there (foreach's GetEnumerator,
// using's Dispose, a collection initialiser's Add) is not written in the source and is
// left out, as is one with no or a hidden sequence point. "member" says it goes through
// a value (`x.M()`, `this.M()`, `base.M()`, `x?.M()`, `x.Ext()`), not `M()` or `T.M()`.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;
using Mono.Cecil;
using Mono.Cecil.Cil;
using Mono.CompilerServices.SymbolWriter;

class Source {
    public string Path, Text;
    public bool[] Code; // false inside comments, strings, chars and preprocessor lines
    public int[] LineStarts;
    public List<Span> Units = new List<Span>();

    public Source(string path) {
        Path = path;
        Text = File.ReadAllText(path);
        var starts = new List<int> { 0 };
        for (int i = 0; i < Text.Length; i++) if (Text[i] == '\n') starts.Add(i + 1);
        LineStarts = starts.ToArray();
        Code = Mask(Text);
    }

    static bool[] Mask(string t) {
        var code = new bool[t.Length + 1];
        int i = 0, n = t.Length;
        bool lineStart = true;
        while (i < n) {
            char c = t[i];
            if (c == '\n') { code[i++] = true; lineStart = true; continue; }
            if (lineStart && c == '#') { while (i < n && t[i] != '\n') i++; continue; }
            if (!char.IsWhiteSpace(c)) lineStart = false;
            if (c == '/' && i + 1 < n && t[i + 1] == '/') { while (i < n && t[i] != '\n') i++; continue; }
            if (c == '/' && i + 1 < n && t[i + 1] == '*') {
                int e = t.IndexOf("*/", i + 2);
                i = e < 0 ? n : e + 2;
                continue;
            }
            bool verbatim = (c == '@' && i + 1 < n && t[i + 1] == '"')
                || ((c == '$') && i + 2 < n && t[i + 1] == '@' && t[i + 2] == '"')
                || ((c == '@') && i + 2 < n && t[i + 1] == '$' && t[i + 2] == '"');
            if (verbatim) {
                i = t.IndexOf('"', i) + 1;
                while (i < n) {
                    if (t[i] == '"') { if (i + 1 < n && t[i + 1] == '"') { i += 2; continue; } i++; break; }
                    i++;
                }
                continue;
            }
            if (c == '"' || c == '\'' || (c == '$' && i + 1 < n && t[i + 1] == '"')) {
                if (c == '$') i++;
                char q = t[i++];
                while (i < n && t[i] != q && t[i] != '\n') i += t[i] == '\\' ? 2 : 1;
                i++;
                continue;
            }
            code[i++] = true;
        }
        return code;
    }

    public int Line(int pos) {
        int k = Array.BinarySearch(LineStarts, pos);
        return (k >= 0 ? k : ~k - 1) + 1;
    }

    public int Pos(int line, int col) {
        return line >= 1 && line <= LineStarts.Length ? LineStarts[line - 1] + col - 1 : -1;
    }

    public static bool Ident(char c) {
        return char.IsLetterOrDigit(c) || c == '_';
    }

    public bool WordAt(int pos, string word, bool code = true) {
        if (pos < 0 || pos + word.Length > Text.Length || string.CompareOrdinal(Text, pos, word, 0, word.Length) != 0) return false;
        if (code && !Code[pos]) return false;
        if (pos > 0 && (Ident(Text[pos - 1]) || Text[pos - 1] == '@' && pos > 1 && Ident(Text[pos - 2]))) return false;
        int e = pos + word.Length;
        return e >= Text.Length || !Ident(Text[e]);
    }

    /// The next code character at or after pos that is not white space, or -1.
    public int Next(int pos) {
        while (pos < Text.Length && (!Code[pos] || char.IsWhiteSpace(Text[pos]))) pos++;
        return pos < Text.Length ? pos : -1;
    }

    /// The last code character before pos that is not white space, or -1.
    public int Prev(int pos) {
        pos--;
        while (pos >= 0 && (!Code[pos] || char.IsWhiteSpace(Text[pos]))) pos--;
        return pos;
    }

    /// The position of the bracket closing the one at pos, or -1.
    public int Match(int pos) {
        char open = Text[pos], close = open == '(' ? ')' : open == '[' ? ']' : open == '<' ? '>' : '}';
        int depth = 0;
        for (int i = pos; i < Text.Length; i++) {
            if (!Code[i]) continue;
            if (Text[i] == open) depth++;
            else if (Text[i] == close && --depth == 0) return i;
            else if (open == '<' && (Text[i] == ';' || Text[i] == '{' || Text[i] == ')')) return -1;
        }
        return -1;
    }

    /// The end of the member whose header goes on at pos (a body `{..}`, an arrow
    /// `=> ..;`, or `;`), skipping `( )` and `[ ]`; -1 when there is none.
    public int MemberEnd(int pos) {
        for (int i = pos; i >= 0 && i < Text.Length; i++) {
            if (!Code[i]) continue;
            char c = Text[i];
            if (c == '(' || c == '[') { i = Match(i); if (i < 0) return -1; continue; }
            if (c == '{') return Match(i);
            if (c == ';') return i;
            if (c == '=' && i + 1 < Text.Length && Text[i + 1] == '>') {
                for (int j = i + 2; j < Text.Length; j++) {
                    if (!Code[j]) continue;
                    if (Text[j] == '(' || Text[j] == '[' || Text[j] == '{') { j = Match(j); if (j < 0) return -1; continue; }
                    if (Text[j] == ';') return j;
                }
                return -1;
            }
            if (c == '}') return -1;
        }
        return -1;
    }

    /// The first line of the declaration whose name is at pos: after the code that ends
    /// the member before it (`;`, `{`, `}`), attributes and modifiers included.
    public int DeclStart(int pos) {
        int i = pos - 1;
        while (i >= 0 && !(Code[i] && (Text[i] == ';' || Text[i] == '{' || Text[i] == '}'))) {
            if (Code[i] && Text[i] == ']') { // an attribute: its arguments may hold any of those
                int depth = 0;
                for (; i >= 0; i--) {
                    if (!Code[i]) continue;
                    if (Text[i] == ']') depth++;
                    else if (Text[i] == '[' && --depth == 0) break;
                }
            }
            i--;
        }
        return Line(Next(i + 1));
    }
}

class Span {
    public int Start, End, Unit; // character positions, the unit's index
}

class Labeller {
    static StringBuilder Json(StringBuilder b, object o) {
        if (o == null) return b.Append("null");
        if (o is string) {
            b.Append('"');
            foreach (char c in (string) o) {
                if (c == '"' || c == '\\') b.Append('\\').Append(c);
                else if (c < 0x20) b.AppendFormat("\\u{0:x4}", (int) c);
                else b.Append(c);
            }
            return b.Append('"');
        }
        if (o is bool) return b.Append((bool) o ? "true" : "false");
        if (o is System.Collections.IDictionary) {
            b.Append('{');
            bool first = true;
            var d = (System.Collections.IDictionary) o;
            foreach (System.Collections.DictionaryEntry e in d) {
                if (!first) b.Append(',');
                first = false;
                Json(b, e.Key.ToString()).Append(':');
                Json(b, e.Value);
            }
            return b.Append('}');
        }
        if (o is System.Collections.IEnumerable) {
            b.Append('[');
            bool first = true;
            foreach (var x in (System.Collections.IEnumerable) o) {
                if (!first) b.Append(',');
                first = false;
                Json(b, x);
            }
            return b.Append(']');
        }
        return b.Append(o.ToString());
    }

    static bool Generated(MethodDefinition m) {
        if (m.Name.StartsWith("<")) return true;
        for (var t = m.DeclaringType; t != null; t = t.DeclaringType) {
            if (t.Name.StartsWith("<") || t.CustomAttributes.Any(a =>
                    a.AttributeType.FullName == "System.Runtime.CompilerServices.CompilerGeneratedAttribute"))
                return true;
        }
        return m.CustomAttributes.Any(a => a.AttributeType.FullName == "System.Runtime.CompilerServices.CompilerGeneratedAttribute");
    }

    static string Plain(string typeName) {
        int k = typeName.IndexOf('`');
        return k < 0 ? typeName : typeName.Substring(0, k);
    }

    static readonly Dictionary<string, Source> sources = new Dictionary<string, Source>();
    static Source SourceOf(string path) {
        Source s;
        if (!sources.TryGetValue(path, out s)) {
            s = File.Exists(path) ? new Source(path) : null;
            sources[path] = s;
        }
        return s;
    }

    class Point { public int Offset, Line, Col; public Source Src; }

    static Dictionary<string, int> dropped = new Dictionary<string, int>();
    static readonly bool debug = Environment.GetEnvironmentVariable("LABELLER_DEBUG") != null;
    static void Drop(string why, object what = null) {
        if (debug) Console.Error.WriteLine(why + ": " + what);
        int n;
        dropped.TryGetValue(why, out n);
        dropped[why] = n + 1;
    }

    static void Main(string[] args) {
        var module = ModuleDefinition.ReadModule(args[0]);
        var symbols = MonoSymbolFile.ReadSymbolFile(args[0] + ".mdb");
        var points = new Dictionary<MethodDefinition, List<Point>>();
        var methods = module.GetTypes().SelectMany(t => t.Methods).Where(m => m.HasBody).ToList();
        foreach (var m in methods) {
            var entry = symbols.GetMethodByToken(m.MetadataToken.ToInt32());
            var list = new List<Point>();
            if (entry != null) {
                foreach (var ln in entry.GetLineNumberTable().LineNumbers) {
                    var file = symbols.GetSourceFile(ln.File);
                    if (ln.IsHidden || ln.Row <= 0 || ln.Row == 0xfeefee || file == null) {
                        list.Add(new Point { Offset = ln.Offset, Line = 0 });
                        continue;
                    }
                    list.Add(new Point { Offset = ln.Offset, Line = ln.Row, Col = ln.Column, Src = SourceOf(file.FileName) });
                }
            }
            points[m] = list;
        }

        var defs = new List<Dictionary<string, object>>();
        var units = new List<Dictionary<string, object>>();
        var defOf = new Dictionary<MethodDefinition, int>();
        var spanOf = new Dictionary<MethodDefinition, Span>();
        var propertyUnits = new Dictionary<string, Span>();

        Func<Source, int, int, string, Span> addUnit = (src, namePos, end, name) => {
            var u = new Dictionary<string, object>();
            u["path"] = src.Path;
            u["name"] = name;
            u["start"] = src.DeclStart(namePos);
            u["name_line"] = src.Line(namePos);
            var span = new Span { Start = src.LineStarts[(int) u["start"] - 1], End = end, Unit = units.Count };
            units.Add(u);
            src.Units.Add(span);
            return span;
        };

        // Definitions and units: the methods the source writes.
        foreach (var m in methods) {
            if (Generated(m)) continue;
            var own = points[m].Where(p => p.Line > 0 && p.Src != null).ToList();
            if (own.Count == 0 && !m.IsConstructor) {
                // An iterator or async method: its body is in the compiler's `<Name>c__..`.
                string prefix = "<" + m.Name + ">";
                own = m.DeclaringType.NestedTypes.Where(t => t.Name.StartsWith(prefix)).SelectMany(t => t.Methods)
                    .Where(x => x.HasBody).SelectMany(x => points[x]).Where(p => p.Line > 0 && p.Src != null)
                    .OrderBy(p => p.Line).ThenBy(p => p.Col).Take(1).ToList();
                if (own.Count > 0 && m.DeclaringType.Methods.Count(x => x.Name == m.Name) > 1) own.Clear();
            }
            if (own.Count == 0) { // a constructor or accessor the compiler writes has none
                if (!m.IsConstructor && !m.IsSpecialName) Drop("method without a sequence point", m.FullName);
                continue;
            }
            string name = m.Name;
            bool ctor = m.IsConstructor, accessor = m.IsGetter || m.IsSetter || m.IsAddOn || m.IsRemoveOn || m.IsFire;
            bool op = m.IsSpecialName && name.StartsWith("op_");
            if (ctor) name = Plain(m.DeclaringType.Name);
            else if (accessor) {
                name = name.Substring(name.IndexOf('_') + 1);
                if (m.DeclaringType.CustomAttributes.Any(a => a.AttributeType.Name == "DefaultMemberAttribute"
                        && (string) a.ConstructorArguments[0].Value == name) && m.Parameters.Count > (m.IsGetter ? 0 : 1))
                    name = "this";
            } else if (op) name = "operator";
            name = name.Substring(name.LastIndexOf('.') + 1);
            // The declaration's name: backwards from a sequence point of the body (a
            // constructor's first ones may be its class's field initialisers: its last is
            // its own), checked by the member's extent holding that point.
            var at = ctor ? own[own.Count - 1] : own[0];
            var src = at.Src;
            int from = src.Pos(at.Line, at.Col), namePos = -1, end = -1;
            for (int i = from - 1; i >= 0; i--) {
                if (!src.WordAt(i, name)) continue;
                int next = src.Next(i + name.Length);
                if (next < 0) break;
                char c = src.Text[next];
                if (accessor ? (name == "this" ? c != '[' : c != '{' && !(c == '=' && src.Text[next + 1] == '>'))
                        : op ? false : c != '(' && c != '<') continue;
                int before = src.Prev(i);
                if (before >= 0 && src.Text[before] == '.' && !m.Name.Contains(".")) continue;
                if (before >= 2 && src.WordAt(before - 2, "new")) continue;
                if (!accessor && c == '<') { next = src.Match(next); if (next < 0) continue; next = src.Next(next + 1); }
                int e = src.MemberEnd(next);
                if (e >= from) { namePos = i; end = e; }
                break;
            }
            if (op && namePos < 0) {
                for (int i = from - 1; i >= 0; i--) {
                    if (!src.WordAt(i, "operator")) continue;
                    int e = src.MemberEnd(i);
                    if (e >= from) { namePos = i; end = e; }
                    break;
                }
            }
            if (namePos < 0) { if (!ctor && name != "Finalize") Drop("declaration not found", m.FullName); continue; }
            Span span;
            if (accessor) {
                string key = src.Path + ":" + namePos;
                if (!propertyUnits.TryGetValue(key, out span))
                    span = propertyUnits[key] = addUnit(src, namePos, end, name == "this" ? "this" : name);
            } else {
                span = addUnit(src, namePos, end, name);
            }
            spanOf[m] = span;
            if (ctor || accessor || op) continue;
            var d = new Dictionary<string, object>(units[span.Unit]);
            var chain = new List<string>();
            for (var t = m.DeclaringType; t != null; t = t.DeclaringType) chain.Insert(0, Plain(t.Name));
            d["chain"] = chain;
            d["end_line"] = src.Line(end);
            d["params"] = m.Parameters.Count;
            d["varargs"] = m.Parameters.Count > 0 && m.Parameters[m.Parameters.Count - 1].CustomAttributes.Any(
                a => a.AttributeType.FullName == "System.ParamArrayAttribute");
            d["explicit"] = m.Name.Contains("."); // `I.M()`: a definition of the name, no target
            defOf[m] = defs.Count;
            defs.Add(d);
        }
        // Types as units of what no method holds (field initialisers).
        var typeDecl = new Regex(@"\b(class|struct|interface|enum)\s+(@?\w+)");
        foreach (var src in sources.Values.Where(s => s != null).ToList()) {
            foreach (Match mt in typeDecl.Matches(src.Text)) {
                int pos = mt.Groups[2].Index;
                int prev = src.Prev(mt.Index);
                if (!src.Code[mt.Index] || !src.Code[pos] || prev >= 0 && (src.Text[prev] == ':' || src.Text[prev] == ',')) continue;
                int e = src.MemberEnd(pos);
                if (e > pos) addUnit(src, pos, e, mt.Groups[2].Value.TrimStart('@'));
            }
        }

        // Calls.
        var calls = new List<Dictionary<string, object>>();
        foreach (var m in methods) {
            var pts = points[m];
            foreach (var ins in m.Body.Instructions) {
                if (ins.OpCode != OpCodes.Call && ins.OpCode != OpCodes.Callvirt) continue;
                var mr = ins.Operand as MethodReference;
                MethodDefinition callee = null;
                try { callee = mr.Resolve(); } catch (Exception) { }
                int d;
                if (callee == null || !defOf.TryGetValue(callee, out d)) continue;
                Point p = null;
                foreach (var q in pts) if (q.Offset <= ins.Offset) p = q;
                if (p == null || p.Line == 0) { Drop("call without a sequence point", m.FullName + " -> " + callee.Name); continue; }
                if (p.Src == null) { Drop("call in a missing file"); continue; }
                var src = p.Src;
                int pos = src.Pos(p.Line, p.Col);
                string name = callee.Name;
                if (!src.WordAt(pos, name, false)) {
                    // A static field's initialiser is marked at its declaration: the only
                    // `Name(` on that line, if there is one.
                    int ls = src.LineStarts[p.Line - 1];
                    int le = p.Line < src.LineStarts.Length ? src.LineStarts[p.Line] : src.Text.Length;
                    var found = new Regex(@"(?<![\w@])" + Regex.Escape(name) + @"\s*(<[^;{}()]*>)?\s*\(")
                        .Matches(src.Text.Substring(ls, le - ls));
                    if (found.Count != 1) { Drop("call not spelled at its sequence point", src.Path + ":" + p.Line + ":" + p.Col + " " + name); continue; }
                    pos = ls + found[0].Index;
                }
                int before = src.Prev(pos);
                bool through = before >= 0 && src.Text[before] == '.';
                bool ext = callee.CustomAttributes.Any(a =>
                    a.AttributeType.FullName == "System.Runtime.CompilerServices.ExtensionAttribute");
                bool member = through && (callee.HasThis || ext);
                // The caller: the method itself where it is written in the source and holds
                // the point, else the innermost unit around the point (lambdas, iterators,
                // field initialisers).
                Span own;
                int caller = -1;
                if (spanOf.TryGetValue(m, out own) && own.Start <= pos && pos <= own.End
                        && units[own.Unit]["path"].Equals(src.Path)) {
                    caller = own.Unit;
                } else {
                    Span best = null;
                    foreach (var s in src.Units)
                        if (s.Start <= pos && pos <= s.End && (best == null || s.End - s.Start < best.End - best.Start)) best = s;
                    if (best != null) caller = best.Unit;
                }
                var c = new Dictionary<string, object>();
                c["callee"] = d;
                c["path"] = src.Path;
                c["line"] = p.Line;
                c["member"] = member;
                c["caller"] = caller;
                calls.Add(c);
            }
        }
        var o = new Dictionary<string, object>();
        o["defs"] = defs;
        o["units"] = units;
        o["calls"] = calls;
        o["dropped"] = dropped;
        Console.WriteLine(Json(new StringBuilder(), o));
    }
}
