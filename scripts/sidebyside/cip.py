"""cloud-info-provider-service as installed, except for its GOCDB lookup: every run asks
goc.egi.eu for the service entry of the endpoint URL, which a private test cloud does not have and
this machine cannot reach. The lookup is replaced by "not in GOCDB" (what it returns for an unknown
URL) so the time measured is the OpenStack work alone, as accelfed's is (accelfed takes the GOCDB
id from its configuration).

usage: VENV/bin/python cip.py ARGS... (those of cloud-info-provider-service)"""
import sys

from cloud_info_provider.providers import utils

utils.find_in_gocdb = lambda *args, **kwargs: {}

from cloud_info_provider.core import main  # noqa: E402

sys.argv[0] = "cloud-info-provider-service"
main()
