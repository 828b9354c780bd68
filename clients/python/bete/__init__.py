"""Generated protobuf and gRPC stubs of the bete API (package bete.v1).

Regenerate with scripts/gen-stubs.sh; do not edit.
"""
