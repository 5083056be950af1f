"""Cost of running a cached expression vs CPython eval() of the same logic.

Run: python bench/bench_expr.py   (prints timings and the ratio; no pass/fail)
Both sides share one environment, so the lookup() snapshot and gjson path
parsing are cached for both; the ratio measures the expression machinery.

Instruction counts (stable on a busy machine): ``--loop N CASE`` only evaluates case
CASE (0-3, 4 = render_string) N times; run it under callgrind with two N and divide
the difference, e.g. ``valgrind --tool=callgrind python bench/bench_expr.py --loop 11000 1``
minus ``... --loop 1000 1``, over 10000.
"""
from __future__ import annotations

import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ccm.expr import compile_expr  # noqa: E402
from ccm.templates import make_environment, render_string  # noqa: E402

CASES = [
    ("lookup('facts.host.info.platformFamily') == 'debian' && Data.port > 1024",
     "lookup('facts.host.info.platformFamily') == 'debian' and Data['port'] > 1024"),
    ("Data.port + 1", "Data['port'] + 1"),
    ("Facts.host.info.platformFamily == 'debian'", "Facts['host']['info']['platformFamily'] == 'debian'"),
    ("len(filter(Data.list, # > 2))", "len([x for x in Data['list'] if x > 2])"),
]


def _per_call(fn, number: int) -> float:
    best = min(timeit.repeat(fn, number=number, repeat=5))
    return best / number * 1e6


def _paired(fn_a, fn_b, number: int, rounds: int = 7) -> tuple:
    """Best per-call time (us) of each, measured alternately so load spikes hit both."""
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, timeit.timeit(fn_a, number=number))
        best_b = min(best_b, timeit.timeit(fn_b, number=number))
    return best_a / number * 1e6, best_b / number * 1e6


def _env() -> dict:
    return make_environment(
        facts={"host": {"info": {"platformFamily": "debian", "hostname": "web1"}}},
        data={"port": 8080, "list": [1, 2, 3, 4, 5]},
        environ={"HOME": "/root"},
        working_dir="/tmp",
    )


def loop(count: int, case: int) -> None:
    env = _env()
    if case < len(CASES):
        program = compile_expr(CASES[case][0])
        for _ in range(count):
            program.run(env)
    else:
        text = "port={{ Data.port }} family={{ lookup('facts.host.info.platformFamily') }}"
        for _ in range(count):
            render_string(text, env)


def main() -> None:
    env = _env()
    number = 20000
    for expr_source, py_source in CASES:
        program = compile_expr(expr_source)
        code = compile(py_source, "<bench>", "eval")
        assert program.run(env) == eval(code, {}, env), expr_source  # noqa: S307
        expr_us, py_us = _paired(lambda: program.run(env),  # noqa: B023 (called before the loop moves on)
                                 lambda: eval(code, {}, env), number)  # noqa: S307, B023
        print(f"{expr_source}\n  expr: {expr_us:.2f} us/eval  python eval: {py_us:.2f} us/eval  "
              f"ratio {expr_us / py_us:.1f}x")
    text = "port={{ Data.port }} family={{ lookup('facts.host.info.platformFamily') }}"
    render_us = _per_call(lambda: render_string(text, env), number)
    print(f"render_string (2 expressions): {render_us:.2f} us/render")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--loop"]:
        loop(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
