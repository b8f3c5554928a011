"""nova-compute from python3-nova with accelfed's fake GPU driver (the nova-compute package would
bring libvirt and qemu). Nova loads drivers from the nova.virt namespace only, so the driver module
is registered there before nova's own entry point runs."""
import sys

import nova.cmd  # noqa: F401  (eventlet monkey-patching first, as nova's entry points do)

import fakegpu

sys.modules["nova.virt.fakegpu"] = fakegpu

from nova.cmd.compute import main  # noqa: E402

sys.exit(main())
