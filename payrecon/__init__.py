"""payrecon: the merchant's side of a bank-transfer payments provider."""

__version__ = "0.1.0"
