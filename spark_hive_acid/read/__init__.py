"""The read path without Spark: listing, planning, delete events, split reading."""
