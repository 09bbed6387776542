"""The source of gpumon's Grafana dashboards (see dashboards/generate.py)."""
