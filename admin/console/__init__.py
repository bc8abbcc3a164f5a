"""The operators' browser console under `/console`: server-rendered pages, plain forms."""
