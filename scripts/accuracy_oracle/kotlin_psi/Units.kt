// Reads Kotlin files with the Kotlin compiler's own parser (PSI) and prints, one
// tab-separated line each, what loci's accuracy harness needs (../kotlin_bytecode.py):
//
//   P  path  package
//   F  path  name  chain  start  name_line  end_line  inline  params  has_body  local
//   U  path  name  kind  start  name_line  end_line
//
// F: every named function; chain is its enclosing classes and objects, outermost first
// (a companion object by its name, `Companion` when it has none), dot-separated.
// U: every unit a call can sit in: functions, secondary constructors, init blocks,
// property accessors and property initialisers of a class, and classes and objects
// themselves (the innermost one holding a line is the caller). start is the first line
// of the declaration after its doc comment; lines are 1-based.
import com.intellij.openapi.util.Disposer
import com.intellij.psi.PsiComment
import com.intellij.psi.PsiElement
import com.intellij.psi.PsiWhiteSpace
import org.jetbrains.kotlin.cli.jvm.compiler.EnvironmentConfigFiles
import org.jetbrains.kotlin.cli.jvm.compiler.KotlinCoreEnvironment
import org.jetbrains.kotlin.compiler.plugin.CompilerPluginRegistrar
import org.jetbrains.kotlin.config.CompilerConfiguration
import org.jetbrains.kotlin.cli.extensionsStorage
import org.jetbrains.kotlin.kdoc.psi.api.KDoc
import org.jetbrains.kotlin.lexer.KtTokens
import org.jetbrains.kotlin.psi.*
import java.io.File

@OptIn(CompilerConfiguration.Internals::class, org.jetbrains.kotlin.CoreEnvironmentDeprecation::class)
fun main(args: Array<String>) {
    val config = CompilerConfiguration()
    config.extensionsStorage = CompilerPluginRegistrar.ExtensionStorage()
    val env = KotlinCoreEnvironment.createForProduction(
        Disposer.newDisposable(), config, EnvironmentConfigFiles.JVM_CONFIG_FILES)
    val factory = KtPsiFactory(env.project)
    val out = StringBuilder()
    val root = File(args[0])
    for (rel in args.drop(1)) {
        val text = File(root, rel).readText().replace("\r\n", "\n")
        val file = factory.createFile(File(rel).name, text)
        val lineStarts = ArrayList<Int>().apply { add(0); text.forEachIndexed { i, c -> if (c == '\n') add(i + 1) } }
        fun line(off: Int): Int {
            var lo = 0
            var hi = lineStarts.size - 1
            while (lo < hi) {
                val mid = (lo + hi + 1) / 2
                if (lineStarts[mid] <= off) lo = mid else hi = mid - 1
            }
            return lo + 1
        }
        fun start(e: PsiElement): Int {
            var c = e.firstChild
            while (c != null && (c is KDoc || c is PsiComment || c is PsiWhiteSpace)) c = c.nextSibling
            return line((c ?: e).textRange.startOffset)
        }
        fun end(e: PsiElement) = line(maxOf(e.textRange.endOffset - 1, e.textRange.startOffset))
        fun chainOf(e: PsiElement) = generateSequence(e.parent) { it.parent }
            .filterIsInstance<KtClassOrObject>()
            .map { it.name ?: if (it is KtObjectDeclaration && it.isCompanion()) "Companion" else "<anonymous>" }
            .toList().reversed().joinToString(".")
        fun unit(name: String, kind: String, e: PsiElement, nameAt: PsiElement?) {
            out.append("U\t$rel\t$name\t$kind\t${start(e)}\t${line((nameAt ?: e).textRange.startOffset)}\t${end(e)}\n")
        }
        out.append("P\t$rel\t${file.packageFqName.asString()}\n")
        file.accept(object : KtTreeVisitorVoid() {
            override fun visitNamedFunction(f: KtNamedFunction) {
                val name = f.name ?: "<anonymous>"
                val nameLine = line((f.nameIdentifier ?: f).textRange.startOffset)
                out.append("F\t$rel\t$name\t${chainOf(f)}\t${start(f)}\t$nameLine\t${end(f)}\t" +
                    "${f.hasModifier(KtTokens.INLINE_KEYWORD)}\t${f.valueParameters.size}\t${f.hasBody()}\t${f.isLocal}\n")
                unit(name, "function", f, f.nameIdentifier)
                super.visitNamedFunction(f)
            }
            override fun visitSecondaryConstructor(c: KtSecondaryConstructor) {
                unit("constructor", "constructor", c, c.getConstructorKeyword())
                super.visitSecondaryConstructor(c)
            }
            override fun visitAnonymousInitializer(i: KtAnonymousInitializer) {
                unit("init", "init", i, null)
                super.visitAnonymousInitializer(i)
            }
            override fun visitPropertyAccessor(a: KtPropertyAccessor) {
                unit(a.property.name ?: "<property>", "accessor", a, null)
                super.visitPropertyAccessor(a)
            }
            override fun visitProperty(p: KtProperty) {
                if (!p.isLocal) unit(p.name ?: "<property>", "property", p, p.nameIdentifier)
                super.visitProperty(p)
            }
            override fun visitClassOrObject(c: KtClassOrObject) {
                unit(c.name ?: "<anonymous>", "class", c, c.nameIdentifier)
                super.visitClassOrObject(c)
            }
        })
    }
    print(out)
}
