"""Save a screenshot of a scenario in the PyBullet GUI (used for the README image).

Needs a display; headless, run it under Xvfb:
    xvfb-run -a -s "-screen 0 1280x800x24" \
        python tools/screenshot.py warehouse docs/images/warehouse.png --seconds 240 \
        --camera 26 0 -42 22 8 0
"""

from __future__ import annotations

import argparse

from fleetsim.scenario import build, load_scenario
from fleetsim.viz import save_png


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", help="a scenario file or bundled name")
    parser.add_argument("output", help="PNG file to write")
    parser.add_argument("--seconds", type=float, default=25.0, help="simulated seconds first")
    parser.add_argument("--size", type=int, nargs=2, default=(1280, 720), metavar=("W", "H"))
    parser.add_argument(
        "--camera",
        type=float,
        nargs=6,
        metavar=("DIST", "YAW", "PITCH", "X", "Y", "Z"),
        help="a manual camera (metres and degrees); default: frame the whole scene",
    )
    args = parser.parse_args()

    run = build(load_scenario(args.scenario), gui=True, target_rtf=0.0)
    with run.sim as sim:
        sim.configure_visualizer(gui_panels=False, shadows=True)
        if args.camera:
            distance, yaw, pitch, *target = args.camera
            sim.setup_camera(
                "manual", distance=distance, yaw=yaw, pitch=pitch, target=tuple(target)
            )
        else:
            sim.setup_camera("auto", "perspective")
        sim.run_simulation(args.seconds)
        path = save_png(args.output, sim.capture_image(*args.size))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
