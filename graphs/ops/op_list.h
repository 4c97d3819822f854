// The table of ops: one line per vertex kind, PASE_OP(Kind, definition),
// where `definition` is the function in graphs/ops/ that returns its
// OpDefinition. This list makes the OpKind enum (graphs/graph.h), declares
// the functions (graphs/ops/ops.h) and fills the registry
// (graphs/op_registry.cc). Adding an op: its file in graphs/ops/ and its line
// here. Order is the enum's; append new kinds.
// (No include guard: each user defines PASE_OP and includes this list.)
PASE_OP(Fc, fc)
PASE_OP(Einsum, einsum)
PASE_OP(Matmul, matmul)
PASE_OP(Conv2d, conv2d)
PASE_OP(Pool2d, pool2d)
PASE_OP(Elementwise, elementwise)
PASE_OP(Norm, norm)
PASE_OP(Batchnorm, batchnorm)
PASE_OP(Softmax, softmax)
PASE_OP(SoftmaxXent, softmax_xent)
PASE_OP(ReduceMean, reduce_mean)
PASE_OP(Concat, concat)
PASE_OP(Split, split)
PASE_OP(Ravel, ravel)
PASE_OP(Unravel, reshape)
PASE_OP(Transpose, transpose)
PASE_OP(Stack, stack)
PASE_OP(Unstack, unstack)
PASE_OP(Embedding, embedding)
PASE_OP(Lstm, lstm)
PASE_OP(RmsNorm, rmsnorm)
PASE_OP(Expand, expand)
PASE_OP(TopK, topk)
PASE_OP(Scatter, scatter)
PASE_OP(Slice, slice)
