"""acp-codegen: ACP JSON Schema -> intermediate model -> msgspec modules."""
