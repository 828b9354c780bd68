"""Generated from proto/bete/v1 by scripts/gen-stubs.sh; do not edit."""
