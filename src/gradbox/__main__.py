from gradbox.app import main

raise SystemExit(main())
