"""The ``rbd notebooks`` and ``rbd grade`` subcommands (:mod:`rbd.exercises` from the shell)."""

from __future__ import annotations

from rbd._cli_checks import number


def cmd_notebooks(args) -> int:
    """Write the tutorials as Jupyter notebooks (exercise answers as stubs)."""
    from rbd.notebooks import write_notebooks

    written = write_notebooks(args.out_dir, args.tutorials, solutions=args.solutions)
    print(f"wrote {len(written)} notebooks to {args.out_dir}")
    return 0


def cmd_grade(args) -> int:
    """Run the exercise checks of every notebook in a folder and print the table."""
    from rbd.notebooks import format_grade_table, grade

    print(format_grade_table(grade(args.folder, timeout=args.timeout), width=args.width))
    return 0


def add_course_commands(sub) -> None:
    """The ``rbd notebooks`` and ``rbd grade`` subcommands."""
    p = sub.add_parser("notebooks", help="write the tutorials as Jupyter notebooks, exercise "
                       "answers as stubs the student fills in")
    p.add_argument("out_dir", metavar="OUT_DIR", help="folder for the .ipynb files")
    p.add_argument("--solutions", action="store_true",
                   help="also write the worked solutions to OUT_DIR/solutions")
    p.add_argument("--tutorials", metavar="DIR", default=None,
                   help="folder of the MyST tutorials (default: tutorials/ of the checkout "
                        "rbd runs from, else ./tutorials)")
    p.set_defaults(func=cmd_notebooks)
    p = sub.add_parser("grade", help="run the exercise checks of every notebook in FOLDER and "
                       "print a table: file, exercise, pass / fail / not done, message")
    p.add_argument("folder", metavar="FOLDER", help="folder of submitted .ipynb files")
    p.add_argument("--timeout", type=number(float, 0.0, low_open=True), default=300.0,
                   help="seconds one notebook may run (default %(default)g)")
    p.add_argument("--width", type=number(int, 40), default=100,
                   help="width of the table in characters (default %(default)s)")
    p.set_defaults(func=cmd_grade)
