from mir.cli import run_main

run_main()
