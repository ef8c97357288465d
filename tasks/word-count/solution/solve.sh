#!/usr/bin/env bash
echo 9 > answer.txt
echo "answer: 9"
