#!/bin/sh
# JetPack 6 nvidia-smi on Orin: most fields are not available.
echo "[N/A]"
