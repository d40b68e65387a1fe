"""kernelpro's worker: the only part of kernelpro that imports torch.

The C++ binary starts one worker process per evaluation step. A step reads one JSON request
from a file and writes one JSON result to a file (never to stdout, which a candidate may flood):

    python -m kernelpro_worker STEP REQUEST.json RESULT.json

Steps: inspect, analyze, scan, reference, build, check, compare, time, run, trace. See
docs/worker-protocol.md.
"""

PROTOCOL_VERSION = 2  # 2: plain-data files, split reference cache, no reference_dir for candidates
