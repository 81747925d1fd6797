"""A jaxpr lowered to straight-line C: every array of the program becomes
one C scalar per element, every primitive a few C statements.

Right-hand sides of small ODE systems are scalar programs in disguise
(y[0] * y[1] - p[2] ...), so unrolling loses nothing and gives the library
what its C route takes (solvent.jax). Values are numpy object arrays whose
elements are either Python numbers (known while generating: constants,
index arithmetic, the identity matrix jax.jacfwd seeds with) or Sym, the
name of a C variable. Known numbers are folded, including x·0 = 0, x·1 = x
and x + 0 = x, so a Jacobian entry that is structurally zero comes out as
the number 0 and the sparsity pattern is read off the result. (0·x = 0
where x is infinite or NaN at run time: what symbolic differentiation
assumes too.) Equal expressions are computed once (common subexpressions
are shared: a jvp repeats its primal's work).

Floating point: every float is a C double (solvent.jax enables jax's
float64), the operations run in the jaxpr's order and the C is compiled
without contraction (solvent._compile), so f rounds as jax.numpy's f does
on the host up to the libm functions (exp, log, ...), where XLA uses its
own approximations.

Primitives without a C form here (while, scan, sort, ...) raise
NotImplementedError naming the primitive: write loops as Python loops
(they unroll when traced)."""
import math

import numpy as np

import jax
from jax.extend import core as jcore


class Sym:
    """A C expression's variable (or an input such as y[3]) and its C type."""

    __slots__ = ("name", "ctype")

    def __init__(self, name, ctype="double"):
        self.name, self.ctype = name, ctype

    def __repr__(self):
        return self.name


def literal(x):
    """C text of a known number, exact (hexadecimal floats)."""
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return f"{int(x)}L"
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "(-INFINITY)"
    return f"({x.hex()})" if x < 0 or (x == 0 and math.copysign(1, x) < 0) else x.hex()


def text(x):
    return x.name if isinstance(x, Sym) else literal(x)


def known(x):
    return not isinstance(x, Sym)


class Builder:
    """The statements of one C function, each subexpression once."""

    def __init__(self):
        self.lines = []
        self.memo = {}

    def value(self, ctype, expr):
        sym = self.memo.get((ctype, expr))
        if sym is None:
            sym = self.memo[(ctype, expr)] = Sym(f"v{len(self.memo)}", ctype)
            self.lines.append(f"    const {ctype} {sym.name} = {expr};")
        return sym


# ---- scalar operations, folding what is known -------------------------------

def _float(x):
    return np.float64(x)


def _fold(fn, *args):
    """fn over known arguments as C would compute it; None where Python
    refuses (a domain error): then C computes it at run time."""
    try:
        with np.errstate(all="ignore"):
            out = fn(*args)
        return out.item() if isinstance(out, np.generic) else out
    except (ValueError, OverflowError, ZeroDivisionError):
        return None


def _is(x, number):
    return known(x) and not isinstance(x, bool) and x == number


_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


def binary(b, op, x, y, ctype="double"):
    if known(x) and known(y):
        if ctype == "double":
            folded = _fold(_ARITH[op], _float(x), _float(y))
        else:
            folded = _fold(lambda a, c: int(a / c) if op == "/" else _ARITH[op](a, c), int(x), int(y))
        if folded is not None:
            return float(folded) if ctype == "double" else int(folded)
    if op == "+":
        if _is(x, 0):
            return y
        if _is(y, 0):
            return x
    elif op == "-":
        if _is(y, 0):
            return x
        if _is(x, 0):
            return unary(b, "-", y, ctype)
    elif op == "*":
        if _is(x, 0) or _is(y, 0):
            return 0.0 if ctype == "double" else 0
        if _is(x, 1):
            return y
        if _is(y, 1):
            return x
        if _is(x, -1):
            return unary(b, "-", y, ctype)
        if _is(y, -1):
            return unary(b, "-", x, ctype)
    elif op == "/":
        if _is(x, 0) and ctype == "double" and known(y) is False:
            return 0.0
        if _is(y, 1):
            return x
    return b.value(ctype, f"{text(x)} {op} {text(y)}")


def unary(b, op, x, ctype="double"):
    if known(x):
        return -x
    return b.value(ctype, f"{op}{text(x)}")


# The math functions by jax primitive name: C's name and Python's for folding.
_CALLS = {
    "exp": ("exp", math.exp), "exp2": ("exp2", lambda x: 2.0 ** x), "log": ("log", math.log),
    "log1p": ("log1p", math.log1p), "expm1": ("expm1", math.expm1), "sin": ("sin", math.sin),
    "cos": ("cos", math.cos), "tan": ("tan", math.tan), "asin": ("asin", math.asin), "acos": ("acos", math.acos),
    "atan": ("atan", math.atan), "sinh": ("sinh", math.sinh), "cosh": ("cosh", math.cosh),
    "tanh": ("tanh", math.tanh), "asinh": ("asinh", math.asinh), "acosh": ("acosh", math.acosh),
    "atanh": ("atanh", math.atanh), "sqrt": ("sqrt", math.sqrt), "cbrt": ("cbrt", np.cbrt),
    "erf": ("erf", math.erf), "erfc": ("erfc", math.erfc), "lgamma": ("lgamma", math.lgamma),
    "floor": ("floor", math.floor), "ceil": ("ceil", math.ceil), "abs": ("fabs", abs),
    "atan2": ("atan2", math.atan2), "pow": ("pow", math.pow), "rem": ("fmod", math.fmod),
    "max": ("fmax", max), "min": ("fmin", min), "nextafter": ("nextafter", math.nextafter),
}


def call(b, name, *args):
    cname, fold = _CALLS[name]
    if all(known(a) for a in args):
        folded = _fold(fold, *[float(a) for a in args])
        if folded is not None:
            return float(folded)
    return b.value("double", f"{cname}({', '.join(text(a) for a in args)})")


def integer_pow(b, x, y):
    """x**y as jax computes it (lax's _integer_pow: square and multiply),
    so that the rounding is the same."""
    if y == 0:
        return 1.0
    reciprocal, y = y < 0, abs(y)
    acc = None
    while y > 0:
        if y & 1:
            acc = x if acc is None else binary(b, "*", acc, x)
        y >>= 1
        if y > 0:
            x = binary(b, "*", x, x)
    return binary(b, "/", 1.0, acc) if reciprocal else acc


_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def compare(b, op, x, y):
    if known(x) and known(y):
        return bool(eval(f"x {_COMPARE[op]} y", {}, {"x": x, "y": y}))  # noqa: S307 (two numbers)
    return b.value("int", f"{text(x)} {_COMPARE[op]} {text(y)}")


def select(b, which, cases):
    """cases[which] (lax.select_n)."""
    if known(which):
        return cases[int(which)]
    if all(c is cases[0] or (known(c) and known(cases[0]) and c == cases[0]) for c in cases):
        return cases[0]
    ctype = next((c.ctype for c in cases if isinstance(c, Sym)), "double")
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):  # which == k ? cases[k] : (...)
        cond = f"!{text(which)}" if len(cases) == 2 else f"{text(which)} == {k}"
        out = b.value(ctype, f"{cond} ? {text(cases[k])} : {text(out)}")
    return out


def convert(b, x, dtype):
    kind = np.dtype(dtype).kind
    if known(x):
        return float(x) if kind in "fc" else bool(x) if kind == "b" else int(x)
    if kind == "f":
        return x if x.ctype == "double" else b.value("double", f"(double){x.name}")
    if kind == "b":
        return b.value("int", f"{x.name} != 0")
    return x if x.ctype == "long" else b.value("long", f"(long){x.name}")


def ctype_of(dtype):
    kind = np.dtype(dtype).kind
    if kind == "c":
        raise NotImplementedError("complex numbers in the right-hand side (solvent.jax lowers real code)")
    return "double" if kind == "f" else "int" if kind == "b" else "long"


# ---- primitives ---------------------------------------------------------------

def _elementwise(fn, keys=()):
    """fn over the elements (numpy broadcasting), given the parameters
    named in keys (the others, such as accuracy or out_dtype, change
    nothing here)."""
    def apply(b, ins, params, eqn):
        params = {k: params[k] for k in keys}
        arrays = np.broadcast_arrays(*ins)
        shape = eqn.outvars[0].aval.shape
        out = np.empty(shape, dtype=object)
        for idx in np.ndindex(*shape):
            out[idx] = fn(b, *(a[idx] for a in arrays), **params)
        return [out]
    return apply


def _typed(fn):
    """fn(b, ctype, *xs) with the C type of the equation's output."""
    def apply(b, ins, params, eqn):
        ctype = ctype_of(eqn.outvars[0].aval.dtype)
        return _elementwise(lambda b_, *xs: fn(b_, ctype, *xs))(b, ins, params, eqn)
    return apply


def _sign(b, x):
    if known(x):
        return float(np.sign(x))
    return b.value("double", f"(double)(({x.name} > 0) - ({x.name} < 0))")


def _not(b, x):
    return (not x) if known(x) else b.value("int", f"!{x.name}")


def _both(op, py):
    def fn(b, x, y):
        if known(x) and known(y):
            return py(x, y)
        return b.value("int", f"{text(x)} {op} {text(y)}")
    return fn


def _round(b, x, rounding_method=0):
    if known(x):
        return float(np.round(x)) if int(rounding_method) == 1 else float(math.copysign(math.floor(abs(x) + 0.5), x))
    return b.value("double", f"{'nearbyint' if int(rounding_method) == 1 else 'round'}({x.name})")


ELEMENTWISE = {
    "add": _typed(lambda b, c, x, y: binary(b, "+", x, y, c)),
    "add_any": _typed(lambda b, c, x, y: binary(b, "+", x, y, c)),
    "sub": _typed(lambda b, c, x, y: binary(b, "-", x, y, c)),
    "mul": _typed(lambda b, c, x, y: binary(b, "*", x, y, c)),
    "div": _typed(lambda b, c, x, y: binary(b, "/", x, y, c)),
    "neg": _typed(lambda b, c, x: unary(b, "-", x, c)),
    "square": _typed(lambda b, c, x: binary(b, "*", x, x, c)),
    "integer_pow": _elementwise(lambda b, x, y: integer_pow(b, x, y), ("y",)),
    "rsqrt": _elementwise(lambda b, x: binary(b, "/", 1.0, call(b, "sqrt", x))),
    "logistic": _elementwise(lambda b, x: binary(b, "/", 1.0, binary(b, "+", 1.0, call(b, "exp", unary(b, "-", x))))),
    "sign": _elementwise(_sign),
    "round": _elementwise(_round, ("rounding_method",)),
    "is_finite": _elementwise(lambda b, x: math.isfinite(x) if known(x) else b.value("int", f"isfinite({x.name})")),
    "not": _elementwise(_not),
    "and": _elementwise(_both("&&", lambda x, y: bool(x and y))),
    "or": _elementwise(_both("||", lambda x, y: bool(x or y))),
    "select_n": _elementwise(lambda b, which, *cases: select(b, which, cases)),
    "convert_element_type": None,  # below: needs the output's dtype
    "clamp": _elementwise(lambda b, lo, x, hi: call(b, "min", call(b, "max", x, lo), hi)),
    "copy": _elementwise(lambda b, x: x),
    "copy_p": _elementwise(lambda b, x: x),
    "reduce_precision": _elementwise(lambda b, x: x),
}
for _name in _CALLS:
    ELEMENTWISE[_name] = _elementwise(lambda b, *xs, _n=_name: call(b, _n, *xs))
for _name in _COMPARE:
    ELEMENTWISE[_name] = _elementwise(lambda b, x, y, _n=_name: compare(b, _n, x, y))


def _convert(b, ins, params, eqn):
    dtype = params["new_dtype"]
    return _elementwise(lambda b_, x: convert(b_, x, dtype))(b, ins, params, eqn)


ELEMENTWISE["convert_element_type"] = _convert


# Data movement, done on the object arrays by numpy itself.

def _slice(b, ins, p, eqn):
    x = ins[0]
    strides = p["strides"] or (1,) * x.ndim
    return [x[tuple(slice(s, e, k) for s, e, k in zip(p["start_indices"], p["limit_indices"], strides))]]


def _broadcast_in_dim(b, ins, p, eqn):
    x, shape = ins[0], p["shape"]
    expanded = [1] * len(shape)
    for axis, dim in zip(p["broadcast_dimensions"], x.shape):
        expanded[axis] = dim
    return [np.broadcast_to(x.reshape(expanded), shape)]


def _reshape(b, ins, p, eqn):
    if p.get("dimensions") is not None:
        raise NotImplementedError("reshape with dimensions")
    return [ins[0].reshape(p["new_sizes"])]


def _split(b, ins, p, eqn):
    bounds = np.cumsum([int(s) for s in p["sizes"]])[:-1]
    return list(np.split(ins[0], bounds, axis=p["axis"]))


def _iota(b, ins, p, eqn):
    shape, dim = p["shape"], p["dimension"]
    kind = np.dtype(p["dtype"]).kind
    index = np.indices(shape)[dim]
    return [_objects(index.astype(float) if kind == "f" else index)]


MOVES = {
    "slice": _slice,
    "squeeze": lambda b, ins, p, eqn: [np.squeeze(ins[0], axis=tuple(p["dimensions"]))],
    "expand_dims": lambda b, ins, p, eqn: [np.expand_dims(ins[0], tuple(p["dimensions"]))],
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape,
    "concatenate": lambda b, ins, p, eqn: [np.concatenate(ins, axis=p["dimension"])],
    "stack": lambda b, ins, p, eqn: [np.stack(ins, axis=p["axis"])],
    "split": _split,
    "transpose": lambda b, ins, p, eqn: [np.transpose(ins[0], p["permutation"])],
    "rev": lambda b, ins, p, eqn: [np.flip(ins[0], axis=tuple(p["dimensions"]))],
    "iota": _iota,
}


def _objects(array):
    out = np.empty(np.shape(array), dtype=object)
    for idx in np.ndindex(*out.shape):
        out[idx] = np.asarray(array)[idx].item()
    return out


def _by_identity(b, ins, params, eqn):
    """Any other data movement (gather, scatter, dynamic_slice, pad, ...)
    with known indices: run the primitive itself on integer labels of the
    data operands' elements (operands of the output's dtype; the others,
    the indices, must be known), then read the labels back."""
    out_dtype = eqn.outvars[0].aval.dtype
    pool, args = [], []
    for var, x in zip(eqn.invars, ins):
        if var.aval.dtype == out_dtype:
            args.append(np.arange(len(pool), len(pool) + x.size, dtype=np.int64).reshape(x.shape))
            pool.extend(x.ravel())
        elif all(known(e) for e in x.ravel()):
            args.append(np.asarray(x.tolist(), dtype=var.aval.dtype).reshape(x.shape))
        else:
            raise NotImplementedError(f"{eqn.primitive.name} with indices that depend on t, y or p")
    labels = eqn.primitive.bind(*args, **params)
    labels = labels if eqn.primitive.multiple_results else [labels]
    outs = []
    for lab in labels:
        lab = np.asarray(lab)
        if lab.size and (lab.min() < 0 or lab.max() >= len(pool)):
            raise NotImplementedError(f"{eqn.primitive.name}: an index out of bounds (its fill value)")
        outs.append(np.array([pool[k] for k in lab.ravel()] + [None], dtype=object)[:-1].reshape(lab.shape))
    return outs


LABELLED = {"gather", "dynamic_slice", "dynamic_update_slice", "scatter", "pad"}


def _reduce(op):
    def apply(b, ins, p, eqn):
        x, axes = ins[0], tuple(p["axes"])
        keep = [a for a in range(x.ndim) if a not in axes]
        moved = np.transpose(x, keep + list(axes))
        shape = moved.shape[:len(keep)]
        moved = moved.reshape(shape + (-1,))
        out = np.empty(shape, dtype=object)
        ctype = ctype_of(eqn.outvars[0].aval.dtype)
        for idx in np.ndindex(*shape):
            acc = None
            for e in moved[idx]:
                acc = e if acc is None else op(b, ctype, acc, e)
            out[idx] = acc
        return [out]
    return apply


REDUCTIONS = {
    "reduce_sum": _reduce(lambda b, c, x, y: binary(b, "+", x, y, c)),
    "reduce_prod": _reduce(lambda b, c, x, y: binary(b, "*", x, y, c)),
    "reduce_max": _reduce(lambda b, c, x, y: call(b, "max", x, y)),
    "reduce_min": _reduce(lambda b, c, x, y: call(b, "min", x, y)),
}


def _dot_general(b, ins, p, eqn):
    """Σ over the contracted axes, in order, of products: batch axes
    first, then the left's free axes, then the right's (lax.dot_general)."""
    (lc, rc), (lb, rb) = p["dimension_numbers"]
    x, y = ins
    lf = [a for a in range(x.ndim) if a not in lc and a not in lb]
    rf = [a for a in range(y.ndim) if a not in rc and a not in rb]
    xs = np.transpose(x, list(lb) + lf + list(lc))
    ys = np.transpose(y, list(rb) + list(rc) + rf)
    nb, k = len(lb), int(np.prod([x.shape[a] for a in lc], dtype=int))
    xs = xs.reshape(xs.shape[:nb] + (-1, k))
    ys = ys.reshape(ys.shape[:nb] + (k, -1))
    ctype = ctype_of(eqn.outvars[0].aval.dtype)
    out = np.empty(xs.shape[:-1] + ys.shape[-1:], dtype=object)
    for idx in np.ndindex(*out.shape):
        acc = 0.0 if ctype == "double" else 0
        for j in range(k):
            acc = binary(b, "+", acc, binary(b, "*", xs[idx[:-1] + (j,)], ys[idx[:-2] + (j, idx[-1])], ctype), ctype)
        out[idx] = acc
    return [out.reshape(eqn.outvars[0].aval.shape)]


def _cumulative(op):
    def apply(b, ins, p, eqn):
        x = np.moveaxis(ins[0], p["axis"], -1)
        if p.get("reverse"):
            x = x[..., ::-1]
        out = np.empty(x.shape, dtype=object)
        ctype = ctype_of(eqn.outvars[0].aval.dtype)
        for idx in np.ndindex(*x.shape[:-1]):
            acc = None
            for j, e in enumerate(x[idx]):
                acc = e if acc is None else op(b, ctype, acc, e)
                out[idx + (j,)] = acc
        if p.get("reverse"):
            out = out[..., ::-1]
        return [np.moveaxis(out, -1, p["axis"])]
    return apply


OTHERS = {
    "dot_general": _dot_general,
    "cumsum": _cumulative(lambda b, c, x, y: binary(b, "+", x, y, c)),
    "cumprod": _cumulative(lambda b, c, x, y: binary(b, "*", x, y, c)),
}


def _subjaxpr(params):
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        sub = params.get(key)
        if isinstance(sub, jcore.ClosedJaxpr):
            return sub.jaxpr, sub.consts
        if isinstance(sub, jcore.Jaxpr):
            return sub, []
    return None


def _cond(b, ins, p, eqn):
    which, operands = ins[0], ins[1:]
    branches = [evaluate(b, br.jaxpr, br.consts, operands) for br in p["branches"]]
    outs = []
    for k, var in enumerate(eqn.outvars):
        shape = var.aval.shape
        out = np.empty(shape, dtype=object)
        index = which.reshape(())[()]
        for idx in np.ndindex(*shape):
            out[idx] = select(b, index, [br[k][idx] for br in branches])
        outs.append(out)
    return outs


def evaluate(b, jaxpr, consts, args):
    """The jaxpr's outputs, as object arrays, from its inputs'."""
    env = {}

    def read(atom):
        if isinstance(atom, jcore.Literal):
            return _objects(np.asarray(atom.val))
        return env[atom]

    for var, value in zip(jaxpr.constvars, consts):
        env[var] = _objects(np.asarray(value))
    for var, value in zip(jaxpr.invars, args):
        env[var] = value
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = apply(b, eqn, ins)
        for var, value in zip(eqn.outvars, outs):
            if not isinstance(var, jcore.DropVar):
                env[var] = value
    return [read(a) for a in jaxpr.outvars]


def apply(b, eqn, ins):
    name, params = eqn.primitive.name, eqn.params
    if name in ELEMENTWISE:
        return ELEMENTWISE[name](b, ins, params, eqn)
    if name in MOVES:
        return MOVES[name](b, ins, params, eqn)
    if name in REDUCTIONS:
        return REDUCTIONS[name](b, ins, params, eqn)
    if name in OTHERS:
        return OTHERS[name](b, ins, params, eqn)
    if name == "cond":
        return _cond(b, ins, params, eqn)
    sub = _subjaxpr(params)
    if sub is not None:  # jit, custom_jvp_call, custom_vjp_call, closed_call, checkpoint: the primal body
        jaxpr, consts = sub
        return evaluate(b, jaxpr, consts, ins[len(ins) - len(jaxpr.invars):])
    if name in LABELLED:
        return _by_identity(b, ins, params, eqn)
    raise NotImplementedError(f"the jax primitive '{name}' has no C form in solvent.jax (write loops as Python "
                              "loops, which unroll when traced, and use jnp.where rather than lax control flow)")


def lower(fn, arg_shapes, arg_symbols):
    """(builder, outputs) of fn traced at arguments of these shapes
    (float64), whose elements are the given object arrays of Sym."""
    specs = [jax.ShapeDtypeStruct(s, np.float64) for s in arg_shapes]
    closed = jax.make_jaxpr(fn)(*specs)
    b = Builder()
    outs = evaluate(b, closed.jaxpr, closed.consts, arg_symbols)
    return b, outs
