FROM python:3.12-slim
WORKDIR /app
COPY requirements.lock .
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
RUN TRACE_SECRET_KEY=build TRACE_DATABASE_URL=postgres://x@db/x TRACE_REDIS_URL=redis://redis \
    python manage.py collectstatic --noinput
EXPOSE 8000
