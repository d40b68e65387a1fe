"""Entry point: python -m kernelpro_worker STEP REQUEST.json RESULT.json"""

import os
import sys
import traceback


def main(argv):
    if len(argv) != 4:
        print("usage: python -m kernelpro_worker STEP REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    step, request_path, result_path = argv[1:]
    # Imported here so a broken install still reports through the result file.
    from .common import StepError, read_json, write_json
    from .steps import STEPS

    if step not in STEPS:
        write_json(result_path, {"status": "worker_error", "message": f"unknown step '{step}'"})
        return 2
    try:
        request = read_json(request_path)
        result = STEPS[step](request)
    except StepError as e:
        result = {"status": e.status, "message": e.message}
    except BaseException as e:  # noqa: BLE001 - report, never crash without a result
        result = {"status": "worker_error",
                  "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-4000:]}"}
    result.setdefault("status", "ok")
    write_json(result_path, result)
    sys.stdout.flush()
    sys.stderr.flush()
    # Candidate extensions may leave threads or CUDA state that hang a normal interpreter exit.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
