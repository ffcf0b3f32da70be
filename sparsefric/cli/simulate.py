"""``sparsefric simulate``: a known joint's closed-loop moves or open-loop torque, written as CSV
files and ``truth.json``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from sparsefric.cli.common import (
    _add_output_options,
    _argument_type,
    _examples,
    _positive,
    _positive_list,
    _say,
    _warn,
)
from sparsefric.errors import OptionError, SparsefricError
from sparsefric.options import integer_parser

#: Longest open-loop simulation [s] (10⁷ samples at 1 kHz).
MAX_DURATION_S = 1e4


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``simulate`` to the subcommands ``sub`` of the main parser."""
    p = sub.add_parser("simulate", help="simulate a joint (truth model) into CSV files",
                       description="Simulate closed-loop back-and-forth moves (or an open-loop "
                                   "torque) of a known joint; writes one CSV per trajectory "
                                   "and truth.json. The torque column is the command held "
                                   "over each sample interval (identify it with "
                                   "--torque-timing hold). A model with a validity range (an "
                                   "identified model.json) warns when the simulated motion "
                                   "leaves it.",
                       epilog=_examples("sparsefric simulate --out sim/ --velocities 0.1,1.0",
                                        "sparsefric simulate truth.json --open-loop multisine "
                                        "--duration 20 --out sim-ol/"))
    p.add_argument("model", nargs="?", default=None,
                   help="truth model file (default: the joint of data/example)")
    _add_output_options(p, None)
    p.add_argument("--velocities", type=_positive_list, default=None, metavar="LIST",
                   help="target velocities [rad/s] of back-and-forth moves, comma-separated "
                        "(default: the main paper's train/validate/test split)")
    p.add_argument("--open-loop", default=None, metavar="multisine|chirp|FILE",
                   help="open-loop torque instead of closed-loop moves")
    p.add_argument("--amplitude", type=_positive, default=None, metavar="TORQUE",
                   help="open-loop torque amplitude [N·m] (default: 1.5 × break-away)")
    p.add_argument("--duration", type=_positive, default=10.0, metavar="SECONDS",
                   help="length of the open-loop record [s] (default: 10)")
    p.add_argument("--torque-noise", type=float, default=0.3, metavar="STD",
                   help="standard deviation of the torque noise [N·m] (default: 0.3)")
    p.add_argument("--position-noise", type=float, default=5e-6, metavar="STD",
                   help="standard deviation of the position noise [rad] (default: 5e-6)")
    p.add_argument("--encoder-bits", type=int, default=20, metavar="BITS",
                   help="encoder resolution per turn [bits]; 0: no quantisation (default: 20)")
    p.add_argument("--seed", type=_argument_type(integer_parser(0)), default=0,
                   help="seed of the noise and of the multisine phases, an integer ≥ 0 "
                        "(default: 0)")
    p.add_argument("--presliding", action="store_true",
                   help="also write a pre-sliding record (open loop, torque below break-away) "
                        "for identify --method two-step")
    p.set_defaults(run=_run_simulate)


def _check_simulate_options(args: argparse.Namespace) -> None:
    if not 0 <= args.encoder_bits <= 64:
        raise OptionError("encoder_bits", f"must be between 0 and 64, got {args.encoder_bits}")
    if not (args.torque_noise >= 0 and args.position_noise >= 0):
        raise OptionError("torque_noise", "and --position-noise must be ≥ 0")
    if args.duration > MAX_DURATION_S:
        raise OptionError("duration", f"must be at most {MAX_DURATION_S:g} s, "
                                      f"got {args.duration:g}")
    if args.velocities and not args.open_loop:
        _check_distinct_velocities(args.velocities)


def _check_distinct_velocities(velocities: Sequence[float]) -> None:
    """Each velocity of ``--velocities`` is one file, named by the velocity: two that name
    the same file would leave one of them."""
    from sparsefric.simulate import move_name

    seen: dict[str, float] = {}
    for v in velocities:
        name = move_name("moves", v)
        if name in seen:
            if v == seen[name]:
                raise OptionError("velocities", f"lists {v:g} twice: each velocity is one file "
                                                f"({name}.csv); list each once")
            raise OptionError("velocities", f"lists {seen[name]!r} and {v!r}, which would both "
                                            f"be written to {name}.csv: list velocities that "
                                            "differ in their first 6 significant digits")
        seen[name] = v


def _check_finite(args: argparse.Namespace, trajs) -> None:
    """Fail, writing nothing, when the simulation diverged (a value left the finite numbers)."""
    import numpy as np

    for traj in trajs:
        bad = ~np.isfinite(traj.q) | ~np.isfinite(traj.tau)
        for values in traj.truth.values():
            bad |= ~np.isfinite(values)
        if bad.any():
            t = traj.t[int(np.flatnonzero(bad)[0])]
            raise SparsefricError(f"the simulation of {traj.name} diverged (values not finite "
                                  f"from t = {t:g} s); {_what_to_lower(args)}")


def _what_to_lower(args: argparse.Namespace) -> str:
    """The options whose values drive the simulated joint hardest."""
    if args.open_loop in ("multisine", "chirp"):
        return "lower --amplitude" if args.amplitude else "give a smaller --amplitude"
    if args.open_loop:
        return f"lower the torque in {args.open_loop}"
    return "lower --velocities" if args.velocities else "check the model's inertia"


def _run_simulate(args: argparse.Namespace) -> int:
    import numpy as np

    from sparsefric.atomic import refuse_results, staged
    from sparsefric.baselines import presliding_experiment
    from sparsefric.data import load_trajectories, save_trajectory
    from sparsefric.model import JointModel
    from sparsefric.simulate import (
        EXAMPLE_TRUTH,
        PAPER_SPLIT,
        Sensors,
        chirp,
        multisine,
        paper_experiment,
        simulate,
    )

    out = Path(args.out)
    refuse_results(out, ("truth.json",), args.force)
    truth = JointModel.load(args.model) if args.model else EXAMPLE_TRUTH
    _check_simulate_options(args)
    if truth.inertia <= 0:
        raise SparsefricError(f"{args.model}: rigid_body.inertia must be > 0 to simulate")
    res = 2 * np.pi * 2.0 ** -args.encoder_bits if args.encoder_bits else 0.0
    sensors = Sensors(res, args.position_noise, args.torque_noise, args.seed)
    if args.open_loop:
        amp = args.amplitude or 1.5 * truth.breakaway_torque()
        if args.open_loop == "multisine":
            _, tau = multisine(args.duration, amp, 0.2, 5.0, seed=args.seed)
        elif args.open_loop == "chirp":
            _, tau = chirp(args.duration, amp, 0.1, 5.0)
        else:
            tau = load_trajectories([args.open_loop])[0].tau
        trajs = [simulate(truth, tau_ff=tau, sensors=sensors, name="open_loop")]
    else:
        split = {"moves": args.velocities} if args.velocities else PAPER_SPLIT
        trajs = [t for ts in paper_experiment(truth, split, sensors=sensors).values()
                 for t in ts]
    if args.presliding:
        trajs.append(presliding_experiment(truth, seed=args.seed, sensors=sensors))
    _check_finite(args, trajs)
    motion = {k: np.concatenate([t.truth[f"{k}_true"] for t in trajs]) for k in ("q", "qd")}
    if text := truth.outside_message(motion["q"], motion["qd"]):
        _warn(args, f"the simulated motion leaves the model's range: {text}")

    def work(stage: Path) -> None:
        for traj in trajs:
            save_trajectory(stage / f"{traj.name}.csv", traj)
        truth.save(stage / "truth.json")

    staged(out, work)
    count = f"{len(trajs)} trajector{'y' if len(trajs) == 1 else 'ies'}"
    _say(args, f"{count} and truth.json written to {args.out}/")
    return 0
