
EXAMPLE-CLOUDcloudpod/ns/train"NVIDIA A100-SXM4-80GB(ê0:GPUA™€_#IÂ?X€½£Š
kubernetes’2026-01-01T00:00:00Zš2026-02-01T00:00:00Z¢migª1g.10gb°¸rcms