import sys

from tfscale.worker.main import main

sys.exit(main())
