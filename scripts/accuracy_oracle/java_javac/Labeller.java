// Labels the calls of one Java package with javac's own attribution (the Compiler Tree
// API, module jdk.compiler), for loci's accuracy harness (../java_javac.py).
//
// Usage: java Labeller.java MODULE TREE. Every .java file under TREE is compiled as part
// of MODULE (--patch-module MODULE=TREE, so the package's own module is the rest of
// the program) and attributed, then one JSON object is printed:
//
//   {"errors": N, "first_errors": [...],
//    "defs":  [{"path","name","chain":[...],"start","name_line","end_line","params","varargs","anonymous"}],
//    "units": [{"path","name","start","name_line"}],
//    "calls": [{"callee": DEF, "path", "line", "member", "caller": UNIT or -1}]}
//
// A def is a method with a body (no constructor); "chain" holds its enclosing classes'
// names, outermost first. A unit is what holds a call: a method or constructor, else
// the innermost class (field initialisers, initialiser blocks). A call is a method
// invocation javac resolved to one of the defs (static dispatch: a call through an
// interface or a superclass names that type's method), at the line of the method's
// name; "member" says it goes through a value (x.m(), this.m(), not a bare m() or
// Type.m()).
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class Labeller {
    static StringBuilder json(StringBuilder b, Object o) {
        if (o == null) return b.append("null");
        if (o instanceof String s) {
            b.append('"');
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') b.append('\\').append(c);
                else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
            return b.append('"');
        }
        if (o instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (var e : m.entrySet()) {
                if (!first) b.append(',');
                first = false;
                json(b, e.getKey().toString()).append(':');
                json(b, e.getValue());
            }
            return b.append('}');
        }
        if (o instanceof Collection<?> c) {
            b.append('[');
            boolean first = true;
            for (var x : c) {
                if (!first) b.append(',');
                first = false;
                json(b, x);
            }
            return b.append(']');
        }
        return b.append(o.toString());
    }

    public static void main(String[] args) throws Exception {
        String module = args[0];
        Path tree = Path.of(args[1]).toAbsolutePath();
        List<Path> files;
        try (Stream<Path> s = Files.walk(tree)) {
            files = s.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
        JavaCompiler jc = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
        StandardJavaFileManager fm = jc.getStandardFileManager(diags, null, StandardCharsets.UTF_8);
        List<String> opts = List.of("--patch-module", module + "=" + tree, "--add-modules", module,
                "-proc:none", "-implicit:none",
                "-Xlint:none", "-nowarn", "-XDshould-stop.ifError=FLOW", "-Xmaxerrs", "100000");
        JavacTask task = (JavacTask) jc.getTask(null, fm, diags, opts, null, fm.getJavaFileObjectsFromPaths(files));
        List<CompilationUnitTree> cus = new ArrayList<>();
        task.parse().forEach(cus::add);
        task.analyze();
        Trees trees = Trees.instance(task);
        SourcePositions sp = trees.getSourcePositions();

        List<Map<String, Object>> defs = new ArrayList<>();
        List<Map<String, Object>> units = new ArrayList<>();
        List<Map<String, Object>> calls = new ArrayList<>();
        Map<Element, Integer> defOf = new HashMap<>();
        Map<Tree, Integer> unitOf = new IdentityHashMap<>();

        for (CompilationUnitTree cu : cus) {
            String path = tree.relativize(Path.of(cu.getSourceFile().toUri())).toString();
            LineMap lines = cu.getLineMap();
            String text = cu.getSourceFile().getCharContent(true).toString();
            // Pass 1: definitions and units.
            new TreePathScanner<Void, Void>() {
                final Deque<String> chain = new ArrayDeque<>();
                int anonymous = 0;

                int line(long pos) {
                    return (int) lines.getLineNumber(pos);
                }

                /** The position of `name` at or after `from`, as a word. */
                long nameAt(long from, String name) {
                    int i = (int) Math.max(from, 0);
                    while ((i = text.indexOf(name, i)) >= 0) {
                        boolean before = i == 0 || !Character.isJavaIdentifierPart(text.charAt(i - 1));
                        int e = i + name.length();
                        boolean after = e >= text.length() || !Character.isJavaIdentifierPart(text.charAt(e));
                        if (before && after) return i;
                        i = e;
                    }
                    return from;
                }

                @Override
                public Void visitClass(ClassTree c, Void v) {
                    String name = c.getSimpleName().toString();
                    long start = sp.getStartPosition(cu, c);
                    long namePos = name.isEmpty() ? start : nameAt(sp.getEndPosition(cu, c.getModifiers()), name);
                    Map<String, Object> u = new LinkedHashMap<>();
                    u.put("path", path);
                    u.put("name", name.isEmpty() ? "<anonymous>" : name);
                    u.put("start", line(start));
                    u.put("name_line", line(namePos));
                    unitOf.put(c, units.size());
                    units.add(u);
                    chain.addLast(name);
                    if (name.isEmpty()) anonymous++;
                    super.visitClass(c, v);
                    if (name.isEmpty()) anonymous--;
                    chain.removeLast();
                    return null;
                }

                @Override
                public Void visitMethod(MethodTree m, Void v) {
                    Element e = trees.getElement(getCurrentPath());
                    String name = m.getName().toString();
                    boolean ctor = name.equals("<init>");
                    if (ctor) name = chain.peekLast();
                    long after = m.getReturnType() != null ? sp.getEndPosition(cu, m.getReturnType())
                            : !m.getTypeParameters().isEmpty()
                                    ? sp.getEndPosition(cu, m.getTypeParameters().get(m.getTypeParameters().size() - 1))
                                    : sp.getEndPosition(cu, m.getModifiers());
                    if (after < 0) after = sp.getStartPosition(cu, m);
                    long namePos = nameAt(after, name);
                    long start = sp.getStartPosition(cu, m);
                    Map<String, Object> u = new LinkedHashMap<>();
                    u.put("path", path);
                    u.put("name", name);
                    u.put("start", line(start));
                    u.put("name_line", line(namePos));
                    unitOf.put(m, units.size());
                    units.add(u);
                    if (!ctor && m.getBody() != null && e != null) {
                        Map<String, Object> d = new LinkedHashMap<>(u);
                        d.put("chain", new ArrayList<>(chain));
                        d.put("end_line", line(sp.getEndPosition(cu, m)));
                        d.put("params", m.getParameters().size());
                        d.put("varargs", ((ExecutableElement) e).isVarArgs());
                        d.put("anonymous", anonymous > 0 || chain.contains(""));
                        defOf.put(e, defs.size());
                        defs.add(d);
                    }
                    return super.visitMethod(m, v);
                }
            }.scan(cu, null);
        }
        for (CompilationUnitTree cu : cus) {
            String path = tree.relativize(Path.of(cu.getSourceFile().toUri())).toString();
            LineMap lines = cu.getLineMap();
            // Pass 2: calls.
            new TreePathScanner<Void, Void>() {
                @Override
                public Void visitMethodInvocation(MethodInvocationTree mi, Void v) {
                    Element callee = trees.getElement(getCurrentPath());
                    Integer d = callee == null ? null : defOf.get(callee);
                    if (d != null) {
                        ExpressionTree sel = mi.getMethodSelect();
                        long at;
                        boolean member = false;
                        if (sel instanceof MemberSelectTree ms) {
                            at = sp.getEndPosition(cu, ms) - 1;
                            Element on = trees.getElement(new TreePath(getCurrentPath(), ms.getExpression()));
                            member = on == null || !(on.getKind().isClass() || on.getKind().isInterface()
                                    || on.getKind() == ElementKind.PACKAGE)
                                    || ms.getExpression().toString().equals("this")
                                    || ms.getExpression().toString().equals("super");
                            if (ms.getExpression().toString().equals("super")) member = true;
                        } else {
                            at = sp.getStartPosition(cu, sel);
                        }
                        int caller = -1;
                        for (TreePath p = getCurrentPath(); p != null; p = p.getParentPath()) {
                            Tree t = p.getLeaf();
                            if (t instanceof MethodTree || t instanceof ClassTree) {
                                caller = unitOf.getOrDefault(t, -1);
                                break;
                            }
                        }
                        Map<String, Object> c = new LinkedHashMap<>();
                        c.put("callee", d);
                        c.put("path", path);
                        c.put("line", lines.getLineNumber(at));
                        c.put("member", member);
                        c.put("caller", caller);
                        calls.add(c);
                    }
                    return super.visitMethodInvocation(mi, v);
                }
            }.scan(cu, null);
        }
        List<String> errors = new ArrayList<>();
        for (var dg : diags.getDiagnostics()) {
            if (dg.getKind() == Diagnostic.Kind.ERROR) errors.add(dg.toString());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("errors", errors.size());
        out.put("first_errors", errors.subList(0, Math.min(3, errors.size())));
        out.put("defs", defs);
        out.put("units", units);
        out.put("calls", calls);
        System.out.println(json(new StringBuilder(), out));
    }
}
