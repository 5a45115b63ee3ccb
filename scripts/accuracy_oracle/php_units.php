<?php
// The definitions ("units") of PHP files, read by nikic/PHP-Parser (Debian php-parser
// 4.15, /usr/share/php/PhpParser), for the hand-labelled callers oracle (handlabel.py).
//
// Usage: php php_units.php FILE...   prints JSON {"FILE": {"units": [...]} | {"error": msg}}
//
// A unit is a function or method with a body: a `function` statement (kind "function") or
// a class/interface/trait/enum method that is not abstract (kind "method"; "static" says
// `static function`). Closures and arrow functions are not units: calls inside them belong
// to the enclosing unit. Fields:
//   name, chain (the enclosing class/interface/trait/enum names, outermost first, without
//   their namespace), start (first line of the definition: attributes and modifiers count,
//   a doc comment does not), name_line, end_line, params (parameter count), kind, static,
//   anonymous (a method of `new class {..}`: its chain holds "class@anonymous").
require_once '/usr/share/php/PhpParser/autoload.php';

use PhpParser\Node;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitorAbstract;
use PhpParser\ParserFactory;

final class UnitCollector extends NodeVisitorAbstract
{
    public array $units = [];
    private array $chain = [];
    private array $anon = [];

    public function enterNode(Node $node)
    {
        if ($node instanceof Node\Stmt\ClassLike) {
            $this->chain[] = $node->name === null ? 'class@anonymous' : $node->name->toString();
            $this->anon[] = $node->name === null;
        } elseif ($node instanceof Node\Stmt\Function_) {
            $this->add($node, 'function', false);
        } elseif ($node instanceof Node\Stmt\ClassMethod && $node->stmts !== null) {
            $this->add($node, 'method', $node->isStatic());
        }
        return null;
    }

    public function leaveNode(Node $node)
    {
        if ($node instanceof Node\Stmt\ClassLike) {
            array_pop($this->chain);
            array_pop($this->anon);
        }
        return null;
    }

    private function add(Node $node, string $kind, bool $static): void
    {
        // A named function declared inside a method is global: no chain.
        $chain = $kind === 'function' ? [] : $this->chain;
        $this->units[] = [
            'name' => $node->name->toString(),
            'chain' => $chain,
            'start' => $node->getStartLine(),
            'name_line' => $node->name->getStartLine(),
            'end_line' => $node->getEndLine(),
            'params' => count($node->params),
            'kind' => $kind,
            'static' => $static,
            'anonymous' => $kind === 'method' && in_array(true, $this->anon, true),
        ];
    }
}

$parser = (new ParserFactory())->create(ParserFactory::PREFER_PHP7);
$out = [];
foreach (array_slice($argv, 1) as $file) {
    try {
        $ast = $parser->parse(file_get_contents($file));
        $collector = new UnitCollector();
        $traverser = new NodeTraverser();
        $traverser->addVisitor($collector);
        $traverser->traverse($ast);
        $out[$file] = ['units' => $collector->units];
    } catch (Throwable $e) {
        $out[$file] = ['error' => get_class($e) . ': ' . $e->getMessage()];
    }
}
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT), "\n";
