# The definitions ("units") of Ruby files, read by Ripper (Ruby's own parser), for the
# hand-labelled callers oracle (handlabel.py).
#
# Usage: ruby ruby_units.rb FILE...   prints JSON {"FILE": {"units": [...]} | {"error": msg}}
#
# A unit is a `def`: `def x` (kind "method", or "function" outside any class/module),
# `def self.x` / `def Const.x` and a `def x` inside `class << self` (kind "singleton method",
# singleton true). Blocks, lambdas and procs are not units: calls inside them belong to
# the enclosing unit. Fields:
#   name, chain (the enclosing class/module names, outermost first; `class A::B` gives
#   "A", "B"; `class << self` adds nothing), start (the line of `def`; a modifier such as
#   `private def x` sits on the same line), name_line, end_line (the line of its `end`, or
#   of the last token of an endless `def x = ..`), params (count of parameters of every
#   kind, `&blk` and `*rest` included), kind, singleton, in_block (the def sits inside a
#   block, e.g. `Struct.new(..) do .. end` or `Class.new do .. end`, so its real owner may
#   not be its chain; `Foo = Struct.new(..) do .. end` adds "Foo" to the chain).
require "ripper"
require "json"

class UnitParser < Ripper::SexpBuilder
  attr_reader :ends

  def initialize(src, file)
    super(src, file)
    @def_kw = []   # lines of `def` keywords not yet closed (innermost last)
    @ends = {}     # [name line, name col] -> [def line, end line]
  end

  def on_kw(tok)
    @def_kw << lineno if tok == "def"
    super
  end

  # After every token: the line the last token ended on, and the one before it.
  module Track
    (Ripper::SCANNER_EVENTS - %i[sp nl ignored_nl comment embdoc embdoc_beg embdoc_end heredoc_end
                          words_sep]).each do |ev|
      define_method(:"on_#{ev}") do |tok|
        r = super(tok)
        @prev_tok_line = @tok_line
        @tok_line = lineno + tok.count("\n")
        r
      end
    end
  end
  prepend Track

  def record(name_tok, endless)
    start = @def_kw.pop || name_tok[2][0]
    # A `def .. end` is reduced when its `end` is the current token; an endless def
    # only after a lookahead token, so its last line is the one before.
    last = endless ? (@prev_tok_line || lineno) : lineno
    @ends[name_tok[2]] = [start, last]
  end

  def on_def(name, params, body)
    record(name, !(body.is_a?(Array) && body[0] == :bodystmt))
    super
  end

  def on_defs(target, period, name, params, body)
    record(name, !(body.is_a?(Array) && body[0] == :bodystmt))
    super
  end
end

def const_names(ref)
  # [:const_ref, [:@const, "A", pos]] / [:const_path_ref, left, [:@const, ..]] /
  # [:top_const_ref, [:@const, ..]] / [:var_ref, [:@const, ..]]
  return [] unless ref.is_a?(Array)
  case ref[0]
  when :@const then [ref[1]]
  when :const_ref, :top_const_ref, :var_ref then const_names(ref[1])
  when :const_path_ref then const_names(ref[1]) + const_names(ref[2])
  else []
  end
end

def param_count(params)
  params = params[1] if params.is_a?(Array) && params[0] == :paren
  return 0 unless params.is_a?(Array) && params[0] == :params
  # [:params, pre, opt, rest, post, kw, kwrest, block]
  _, pre, opt, rest, post, kw, kwrest, blk = params
  n = 0
  n += pre.size if pre.is_a?(Array)
  n += opt.size if opt.is_a?(Array)
  n += 1 if rest && rest != 0 && !(rest.is_a?(Array) && rest[0] == :excessed_comma)
  n += post.size if post.is_a?(Array)
  n += kw.size if kw.is_a?(Array)
  n += 1 if kwrest && kwrest != 0
  n += 1 if blk && blk != 0
  n
end

def walk(node, ctx, ends, out)
  return unless node.is_a?(Array)
  if node[0].is_a?(Array) || node[0].nil?
    node.each { |c| walk(c, ctx, ends, out) }
    return
  end
  case node[0]
  when :class
    walk(node[2], ctx, ends, out) # the superclass expression
    walk(node[3], ctx.merge(chain: ctx[:chain] + const_names(node[1]), sclass: false), ends, out)
  when :module
    walk(node[2], ctx.merge(chain: ctx[:chain] + const_names(node[1]), sclass: false), ends, out)
  when :sclass
    walk(node[2], ctx.merge(sclass: true), ends, out)
  when :def, :defs
    name_tok = node[0] == :def ? node[1] : node[3]
    params = node[0] == :def ? node[2] : node[4]
    singleton = node[0] == :defs || ctx[:sclass]
    start, last = ends.fetch(name_tok[2])
    kind = singleton ? "singleton method" : (ctx[:chain].empty? ? "function" : "method")
    out << { name: name_tok[1], chain: ctx[:chain], start: start, name_line: name_tok[2][0],
             end_line: last, params: param_count(params), kind: kind, singleton: singleton,
             in_block: ctx[:block] }
    # A def nested in a def defines a method of the same class when called.
    node[1..].each { |c| walk(c, ctx.merge(sclass: false), ends, out) }
  when :assign
    # `Foo = Struct.new(..) do .. end` / `Foo = Class.new(..) { .. }`: the block's defs
    # belong to Foo.
    lhs, rhs = node[1], node[2]
    if lhs.is_a?(Array) && lhs[0] == :var_field && lhs[1].is_a?(Array) && lhs[1][0] == :@const &&
       rhs.is_a?(Array) && rhs[0] == :method_add_block
      walk(rhs, ctx.merge(chain: ctx[:chain] + [lhs[1][1]], sclass: false), ends, out)
    else
      walk(rhs, ctx, ends, out)
    end
  when :brace_block, :do_block, :lambda
    node[1..].each { |c| walk(c, ctx.merge(block: true), ends, out) }
  when :@ident, :@const, :@kw, :@ivar, :@tstring_content
    nil
  else
    node[1..].each { |c| walk(c, ctx, ends, out) }
  end
end

out = {}
ARGV.each do |file|
  src = File.read(file, mode: "rb").force_encoding("UTF-8")
  src = src.encode("UTF-8", "binary", invalid: :replace, undef: :replace) unless src.valid_encoding?
  p = UnitParser.new(src, file)
  tree = p.parse
  if p.error? || tree.nil?
    out[file] = { error: "syntax error" }
    next
  end
  units = []
  walk(tree, { chain: [], sclass: false, block: false }, p.ends, units)
  out[file] = { units: units }
rescue StandardError => e
  out[file] = { error: "#{e.class}: #{e.message}" }
end
puts JSON.pretty_generate(out)
