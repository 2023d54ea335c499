"""Checks that the validation lives in _check_positive, called by both functions."""
import ast
import sys

tree = ast.parse(open("shapes.py").read())
funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
problems = []
if "_check_positive" not in funcs:
    problems.append("no _check_positive function")
for name in ("rect_area", "circle_area"):
    f = funcs.get(name)
    if f is None:
        problems.append(f"{name} is gone")
        continue
    calls = [n for n in ast.walk(f) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "_check_positive"]
    if not calls:
        problems.append(f"{name} does not call _check_positive")
    if any(isinstance(n, ast.Raise) for n in ast.walk(f)):
        problems.append(f"{name} still raises by itself")
if problems:
    print("; ".join(problems))
    sys.exit(1)
