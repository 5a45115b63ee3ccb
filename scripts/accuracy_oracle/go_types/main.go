// Command go_types labels the calls of one Go package with Go's own type checker
// (go/types), for loci's accuracy harness (scripts/accuracy_oracle/go_types.py).
//
// Usage: go_types DIR. It type-checks the package in DIR as go/build selects its
// files for this host (GOOS, GOARCH; cgo off, so pure-Go files), importing other
// packages from source, and prints one JSON object:
//
//	{"files": [...compiled files...], "errors": N,
//	 "defs":  [{"path","name","recv","start","name_line","end_line"}],
//	 "calls": [{"callee": DEFINDEX, "path", "line", "member", "caller": DEFINDEX or -1}]}
//
// A def is a function or method declaration with a body. A call is a call expression
// whose callee, as the type checker resolved it, is one of those defs (a generic
// function's instantiation counts as the function). "line" is the line of the
// callee's name at the call; "member" says the call goes through a receiver value
// (x.f(), a method value selection); "caller" is the declaration holding the call
// (function literals roll up to it), -1 for package-level initialisers.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
)

type def struct {
	Path     string `json:"path"`
	Name     string `json:"name"`
	Recv     string `json:"recv"`
	Start    int    `json:"start"`
	NameLine int    `json:"name_line"`
	EndLine  int    `json:"end_line"`
}

type call struct {
	Callee int    `json:"callee"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Member bool   `json:"member"`
	Caller int    `json:"caller"`
}

type output struct {
	Files  []string `json:"files"`
	Errors int      `json:"errors"`
	First  []string `json:"first_errors"`
	Defs   []def    `json:"defs"`
	Calls  []call   `json:"calls"`
}

// recvName is the base type name of a method's receiver (`*Stack[T]` is `Stack`).
func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func main() {
	dir, err := filepath.Abs(os.Args[1])
	if err != nil {
		panic(err)
	}
	ctx := build.Default
	ctx.CgoEnabled = false
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	out := output{Defs: []def{}, Calls: []call{}, First: []string{}}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		files = append(files, f)
		out.Files = append(out.Files, name)
	}
	info := &types.Info{
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "source", nil),
		Error: func(err error) {
			out.Errors++
			if len(out.First) < 5 {
				out.First = append(out.First, err.Error())
			}
		},
	}
	pkg, _ := conf.Check(bp.ImportPath, fset, files, info)
	rel := func(p token.Pos) (string, int) {
		pos := fset.Position(p)
		r, _ := filepath.Rel(dir, pos.Filename)
		return r, pos.Line
	}
	// Definitions, by the object the type checker made of their names.
	index := map[types.Object]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			path, start := rel(fd.Pos())
			_, nameLine := rel(fd.Name.Pos())
			_, end := rel(fd.End())
			obj := info.Defs[fd.Name]
			if obj == nil {
				continue
			}
			index[obj] = len(out.Defs)
			out.Defs = append(out.Defs, def{path, fd.Name.Name, recvName(fd), start, nameLine, end})
		}
	}
	for _, f := range files {
		caller := -1
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				caller = -1
				if obj := info.Defs[fd.Name]; obj != nil {
					if i, ok := index[obj]; ok {
						caller = i
					}
				}
				if fd.Body != nil {
					ast.Inspect(fd.Body, visit)
				}
				caller = -1
				return false
			}
			ce, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fun := ce.Fun
			for {
				switch x := fun.(type) {
				case *ast.ParenExpr:
					fun = x.X
					continue
				case *ast.IndexExpr:
					fun = x.X
					continue
				case *ast.IndexListExpr:
					fun = x.X
					continue
				}
				break
			}
			var id *ast.Ident
			member := false
			switch x := fun.(type) {
			case *ast.Ident:
				id = x
			case *ast.SelectorExpr:
				id = x.Sel
				if s, ok := info.Selections[x]; ok && s.Kind() == types.MethodVal {
					member = true
				}
			}
			if id != nil {
				if fn, ok := info.Uses[id].(*types.Func); ok && fn.Pkg() == pkg {
					if i, ok := index[fn.Origin()]; ok {
						path, line := rel(id.Pos())
						out.Calls = append(out.Calls, call{i, path, line, member, caller})
					}
				}
			}
			return true
		}
		for _, d := range f.Decls {
			ast.Inspect(d, visit)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
