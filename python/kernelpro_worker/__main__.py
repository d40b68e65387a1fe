"""Entry point: python -m kernelpro_worker STEP REQUEST.json RESULT.json"""

import faulthandler
import os
import sys


def _start_watchdog():
    """With KERNELPRO_STEP_TIMEOUT_S set, the process ends itself after that many seconds,
    printing every thread's stack to stderr and exiting with status 1. faulthandler's timer is a
    C thread that needs no GIL, so it fires even while a candidate's C++ loop holds the GIL and no
    Python signal handler could run; the binary's own kill stays the backstop."""
    value = os.environ.get("KERNELPRO_STEP_TIMEOUT_S", "")
    if not value:
        return
    try:
        seconds = float(value)
    except ValueError:
        print(f"kernelpro_worker: ignoring KERNELPRO_STEP_TIMEOUT_S={value!r} (not a number)",
              file=sys.stderr)
        return
    if seconds > 0:
        faulthandler.dump_traceback_later(seconds, exit=True)


def main(argv):
    if len(argv) != 4:
        print("usage: python -m kernelpro_worker STEP REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    step, request_path, result_path = argv[1:]
    # Imported here so a broken install still reports through the result file.
    import traceback

    from .common import StepError, read_json, write_json
    from .steps import STEPS

    if step == "serve":  # a long-lived worker (session.py): requests through FIFOs, until exit
        from .session import serve

        try:
            serve(read_json(request_path))
        except BaseException as e:  # noqa: BLE001 - the binary sees the exit and this on stderr
            print(f"kernelpro_worker serve: {type(e).__name__}: {e}\n"
                  f"{traceback.format_exc()[-4000:]}", file=sys.stderr, flush=True)
            os._exit(1)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
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
    try:
        write_json(result_path, result)
    except (TypeError, ValueError) as e:  # a value json cannot hold: still a readable result
        write_json(result_path, {"status": "worker_error",
                                 "message": f"the {step} step's result is not JSON: {e}"})
    sys.stdout.flush()
    sys.stderr.flush()
    # Candidate extensions may leave threads or CUDA state that hang a normal interpreter exit.
    os._exit(0)


if __name__ == "__main__":
    _start_watchdog()  # before anything else: importing torch can itself hang
    sys.exit(main(sys.argv))
