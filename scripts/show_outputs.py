#!/usr/bin/python3
"""Prints what an executed notebook showed, cell by cell, as a console would."""
import json
import sys

nb = json.load(open(sys.argv[1]))
for i, cell in enumerate(nb["cells"]):
    if cell["cell_type"] != "code":
        continue
    for out in cell.get("outputs", []):
        kind = out["output_type"]
        if kind == "stream":
            sys.stdout.write("".join(out["text"]) if isinstance(out["text"], list) else out["text"])
        elif kind in ("execute_result", "display_data", "update_display_data"):
            text = out.get("data", {}).get("text/plain", "")
            print("".join(text) if isinstance(text, list) else text)
        elif kind == "error":
            print(f"cell {i}: {out['ename']}: {out['evalue']}")
            sys.exit(1)
