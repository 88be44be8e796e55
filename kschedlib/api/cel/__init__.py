"""CEL as Kubernetes compiles and runs DRA device selectors: the library functions
(:mod:`.library`), the type-checking compiler with cel-go's cost model (:mod:`.compiler`)
and the API server's validation of selectors (:mod:`.validation`). cel-python's grammar
is imported on the first expression to compile."""

from kschedlib.api.cel.compiler import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CompiledExpression,
    compile_expression,
)
from kschedlib.api.cel.errors import CELCompileError, CELError

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST", "CEL_SELECTOR_EXPRESSION_MAX_LENGTH", "CELCompileError",
    "CELError", "CompiledExpression", "compile_expression",
]
