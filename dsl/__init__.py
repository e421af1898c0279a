"""The policy language: parser, checks and diagnostics, the policy IR and its interpreters."""
