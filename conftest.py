# Chapter notebooks (notebooks/NN_slug.py) are collected and run by nbval through this plugin.
pytest_plugins = ["lab_snippets.testing.nbplugin"]
