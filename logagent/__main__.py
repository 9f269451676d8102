from logagent.cli import main

raise SystemExit(main())
