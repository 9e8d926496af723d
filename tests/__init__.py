"""The test suite; its layout mirrors the package (notes/, store/, index/, answers/, http/ ...)."""
