"""Instruction counts of the rows kernels' SASS (cuobjdump --dump-sass on the
built library), for the byte and float32 full sums: which instructions a
vector load costs. Used on the device machine; see benchmarks/NOTES.md."""
import collections
import re
import subprocess
import sys

import reduce_op

sass = subprocess.run(["cuobjdump", "--dump-sass", reduce_op.library_path()], capture_output=True, text=True).stdout
funcs = re.split(r"\n\s*Function : ", sass)
want = sys.argv[1:] or ["split_rows.*SumOpIlEEhlLi16ELi1E", "split_rows.*SumOpIfEEffLi4ELi1E"]
for f in funcs[1:]:
    name = f.split("\n", 1)[0].strip()
    if not any(re.search(w, name) for w in want):
        continue
    ops = collections.Counter(m.group(1).split(".")[0] for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", f))
    print(name)
    print("  total", sum(ops.values()), " ", ", ".join(f"{k} {v}" for k, v in ops.most_common(18)))
