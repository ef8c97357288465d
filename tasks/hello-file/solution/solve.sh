#!/usr/bin/env bash
# Runs in the working directory of the environment.
printf 'Hello, world!\n' > hello.txt
echo "wrote hello.txt"
