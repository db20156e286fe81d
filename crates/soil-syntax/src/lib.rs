//! `soil-syntax`: Soil's front end: lexer, parser, AST with byte spans, canonical printer and hash form.
